"""The Kiln runtime's C API (runtime/include/kiln/runtime.h) through
ctypes, for tests that run one session at several sizes (symbolic dims):
check_symbolic_gpu.py here, scripts/gpu_check_symbolic.py on a GPU."""
import ctypes

import numpy as np

DTYPES = {np.dtype(np.float32): 1, np.dtype(np.int64): 7}


class Runtime:
    """The C API (runtime/include/kiln/runtime.h) through ctypes: one
    session of one model, run at one size after another."""

    def __init__(self, library):
        self.lib = ctypes.CDLL(library)
        self.lib.kiln_last_error.restype = ctypes.c_char_p
        self.lib.kiln_tensor_data.restype = ctypes.c_void_p
        self.lib.kiln_tensor_shape.restype = ctypes.POINTER(ctypes.c_int64)
        self.lib.kiln_tensor_size_bytes.restype = ctypes.c_size_t

    def check(self, status, what):
        if status != 0:
            raise RuntimeError(f"{what}: {self.lib.kiln_last_error().decode()}")

    def session(self, artifact):
        model, session = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(self.lib.kiln_model_load(artifact.encode(),
                                            ctypes.byref(model)), "load")
        self.check(self.lib.kiln_session_create(model, None,
                                                ctypes.byref(session)),
                   "session")
        return model, session

    def tensor(self, array):
        array = np.ascontiguousarray(array)
        dtype = DTYPES[array.dtype]
        shape = (ctypes.c_int64 * array.ndim)(*array.shape)
        out = ctypes.c_void_p()
        self.check(self.lib.kiln_tensor_create(dtype, array.ndim, shape,
                                               ctypes.byref(out)), "tensor")
        ctypes.memmove(self.lib.kiln_tensor_data(out), array.ctypes.data,
                       array.nbytes)
        return out

    def run(self, session, inputs):
        class Named(ctypes.Structure):
            _fields_ = [("name", ctypes.c_char_p), ("tensor", ctypes.c_void_p)]

        tensors = [self.tensor(value) for value in inputs.values()]
        named = (Named * len(inputs))(*[
            Named(name.encode(), t.value)
            for name, t in zip(inputs, tensors)])
        out = (ctypes.c_void_p * 1)()
        status = self.lib.kiln_session_run(session, named, len(inputs), out, 1)
        for t in tensors:
            self.lib.kiln_tensor_destroy(t)
        self.check(status, "run")
        rank = self.lib.kiln_tensor_rank(ctypes.c_void_p(out[0]))
        shape = self.lib.kiln_tensor_shape(ctypes.c_void_p(out[0]))
        dims = tuple(shape[d] for d in range(rank))
        result = np.empty(dims, np.float32)
        ctypes.memmove(result.ctypes.data,
                       self.lib.kiln_tensor_data(ctypes.c_void_p(out[0])),
                       result.nbytes)
        self.lib.kiln_tensor_destroy(ctypes.c_void_p(out[0]))
        return result
