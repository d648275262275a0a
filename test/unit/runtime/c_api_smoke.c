/* The C API used from C: the header must compile as C, and the calls below
 * are what an embedding C program does. Called by c_api_test.cpp. */
#include "kiln/runtime.h"

#include <stdio.h>
#include <string.h>

/* Runs add_one.so at `path` on 0..5; returns 0 on success, else writes a
 * message to `error`. */
int kiln_test_run_add_one_from_c(const char *path, char *error,
                                 size_t error_size) {
  kiln_model *model = NULL;
  kiln_session *session = NULL;
  kiln_tensor *x = NULL, *y = NULL;
  int64_t shape[2] = {2, 3};
  int result = 1;
  if (kiln_model_load(path, &model) != KILN_OK ||
      kiln_session_create(model, NULL, &session) != KILN_OK ||
      kiln_tensor_create(KILN_DTYPE_F32, 2, shape, &x) != KILN_OK) {
    snprintf(error, error_size, "%s", kiln_last_error());
    goto done;
  }
  float *data = (float *)kiln_tensor_data(x);
  for (int i = 0; i < 6; ++i)
    data[i] = (float)i;
  kiln_named_tensor input = {"x", x};
  if (kiln_session_run(session, &input, 1, &y, 1) != KILN_OK) {
    snprintf(error, error_size, "%s", kiln_last_error());
    goto done;
  }
  const float *out = (const float *)kiln_tensor_data(y);
  for (int i = 0; i < 6; ++i)
    if (out[i] != (float)i + 1.0f) {
      snprintf(error, error_size, "y[%d] = %g", i, out[i]);
      goto done;
    }
  if (strcmp(kiln_dtype_name(kiln_tensor_dtype(y)), "float32") != 0)
    goto done;
  result = 0;
done:
  kiln_tensor_destroy(y);
  kiln_tensor_destroy(x);
  kiln_session_destroy(session);
  kiln_model_free(model);
  return result;
}
