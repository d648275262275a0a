//===- onnx-op-revisions.cpp - ONNX op schema revisions, for the docs -----===//
//
// Prints one line per op of the default ONNX domain: its name, then the
// opset versions at which its schema changed (ONNX's own registry from
// Debian's libonnx). scripts/gen-supported-ops.sh compiles and runs it to
// write the per-opset table of docs/supported-ops.md; not part of Kiln.
//
//===----------------------------------------------------------------------===//
#include "onnx/defs/schema.h"

#include <iostream>
#include <map>
#include <set>
#include <string>

int main() {
  std::map<std::string, std::set<int>> revisions;
  for (const auto &schema :
       onnx::OpSchemaRegistry::get_all_schemas_with_history())
    if (schema.domain().empty() || schema.domain() == "ai.onnx")
      revisions[schema.Name()].insert(schema.since_version());
  int latest = onnx::OpSchemaRegistry::DomainToVersionRange::Instance()
                   .Map()
                   .at("")
                   .second;
  std::cout << "opset " << latest << "\n";
  for (const auto &[name, versions] : revisions) {
    std::cout << name;
    for (int v : versions)
      std::cout << ' ' << v;
    std::cout << '\n';
  }
}
