/* Embedding Kiln from C: load a compiled artifact, feed every input with
 * zeros (symbolic dims at their smallest allowed extent, at least 1), run
 * it, and print each output's name, type and shape.
 *
 *   cc run_model.c $(pkg-config --cflags --libs kiln-runtime) -o run_model
 *   ./run_model model.so
 */
#include "kiln/runtime.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.so\n", argv[0]);
    return 2;
  }
  kiln_model *model = NULL;
  kiln_session *session = NULL;
  int status = 1;
  if (kiln_model_load(argv[1], &model) != KILN_OK ||
      kiln_session_create(model, NULL, &session) != KILN_OK) {
    fprintf(stderr, "error: %s\n", kiln_last_error());
    goto done;
  }
  const kiln_artifact_descriptor *d = kiln_model_descriptor(model);
  kiln_named_tensor *inputs = calloc(d->num_inputs + 1, sizeof *inputs);
  kiln_tensor **owned = calloc(d->num_inputs + 1, sizeof *owned);
  kiln_tensor **outputs = calloc(d->num_outputs + 1, sizeof *outputs);
  for (uint32_t i = 0; i < d->num_inputs; ++i) {
    const kiln_tensor_desc *in = &d->inputs[i];
    int64_t shape[16];
    for (int32_t k = 0; k < in->rank && k < 16; ++k) {
      shape[k] = in->shape[k];
      if (shape[k] < 0) { /* a symbolic dim: its smallest extent */
        int64_t min = d->symbols[in->symbols[k]].min;
        shape[k] = min > 1 ? min : 1;
      }
    }
    if (kiln_tensor_create((kiln_dtype)in->dtype, in->rank, shape, &owned[i]) !=
        KILN_OK) {
      fprintf(stderr, "error: %s\n", kiln_last_error());
      goto cleanup;
    }
    inputs[i].name = in->name;
    inputs[i].tensor = owned[i];
  }
  if (kiln_session_run(session, inputs, d->num_inputs, outputs,
                       d->num_outputs) != KILN_OK) {
    fprintf(stderr, "error: %s\n", kiln_last_error());
    goto cleanup;
  }
  for (uint32_t i = 0; i < d->num_outputs; ++i) {
    printf("output '%s': %s [", d->outputs[i].name,
           kiln_dtype_name(kiln_tensor_dtype(outputs[i])));
    for (int32_t k = 0; k < kiln_tensor_rank(outputs[i]); ++k)
      printf("%s%lld", k ? "," : "",
             (long long)kiln_tensor_shape(outputs[i])[k]);
    printf("]\n");
  }
  status = 0;
cleanup:
  for (uint32_t i = 0; i < d->num_inputs; ++i)
    kiln_tensor_destroy(owned[i]);
  for (uint32_t i = 0; i < d->num_outputs; ++i)
    kiln_tensor_destroy(outputs[i]);
  free(inputs);
  free(owned);
  free(outputs);
done:
  kiln_session_destroy(session);
  kiln_model_free(model);
  return status;
}
