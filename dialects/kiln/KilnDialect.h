//===- KilnDialect.h - The kiln graph dialect -------------------*- C++ -*-===//
#ifndef KILN_DIALECTS_KILN_KILNDIALECT_H
#define KILN_DIALECTS_KILN_KILNDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/kiln/KilnDialect.h.inc"

#endif // KILN_DIALECTS_KILN_KILNDIALECT_H
