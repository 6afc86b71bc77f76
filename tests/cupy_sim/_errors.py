"""CUDA's errors as CuPy raises them: ``CUDARuntimeError`` (runtime API) and ``CUDADriverError``
(driver API: kernel launches), each built from a status code and worded
``'<name>: <description>'`` with the names and descriptions CUDA's error-string functions give.
"""
from __future__ import annotations

# status: (runtime name, driver name, description)
_CODES = {
    1: ("cudaErrorInvalidValue", "CUDA_ERROR_INVALID_VALUE", "invalid argument"),
    101: ("cudaErrorInvalidDevice", "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"),
    400: ("cudaErrorInvalidResourceHandle", "CUDA_ERROR_INVALID_HANDLE",
          "invalid resource handle"),
    401: ("cudaErrorIllegalState", "CUDA_ERROR_ILLEGAL_STATE",
          "the operation cannot be performed in the present state"),
    900: ("cudaErrorStreamCaptureUnsupported", "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
          "operation not permitted when stream is capturing"),
    901: ("cudaErrorStreamCaptureInvalidated", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
          "operation failed due to a previous error during capture"),
    902: ("cudaErrorStreamCaptureMerge", "CUDA_ERROR_STREAM_CAPTURE_MERGE",
          "operation would result in a merge of separate capture sequences"),
    903: ("cudaErrorStreamCaptureUnmatched", "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
          "capture was not ended in the same stream as it began"),
    904: ("cudaErrorStreamCaptureUnjoined", "CUDA_ERROR_STREAM_CAPTURE_UNJOINED",
          "capturing stream has unjoined work"),
    905: ("cudaErrorStreamCaptureIsolation", "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
          "dependency created on uncaptured work in another stream"),
    906: ("cudaErrorStreamCaptureImplicit", "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
          "operation would make the legacy stream depend on a capturing blocking stream"),
    907: ("cudaErrorCapturedEvent", "CUDA_ERROR_CAPTURED_EVENT",
          "operation not permitted on an event last recorded in a capturing stream"),
    908: ("cudaErrorStreamCaptureWrongThread", "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
          "attempt to terminate a thread-local capture sequence from another thread"),
}

# the codes by name, for code that reads them as CuPy's ``runtime`` module exports them
UNSUPPORTED, INVALIDATED, MERGE, UNMATCHED, UNJOINED = 900, 901, 902, 903, 904
ISOLATION, IMPLICIT, CAPTURED_EVENT, WRONG_THREAD = 905, 906, 907, 908
ILLEGAL_STATE, INVALID_HANDLE, INVALID_DEVICE = 401, 400, 101


class CUDARuntimeError(RuntimeError):
    """A CUDA runtime API call failed: ``status`` is its ``cudaError_t``."""

    def __init__(self, status):
        self.status = status
        name, _, text = _CODES[status]
        super().__init__(f"{name}: {text}")

    def __reduce__(self):
        return type(self), (self.status,)


class CUDADriverError(RuntimeError):
    """A CUDA driver API call failed (CuPy launches its kernels through the driver)."""

    def __init__(self, status):
        self.status = status
        _, name, text = _CODES[status]
        super().__init__(f"{name}: {text}")

    def __reduce__(self):
        return type(self), (self.status,)


CUDARuntimeError.__module__ = "cupy_backends.cuda.api.runtime"
CUDADriverError.__module__ = "cupy_backends.cuda.api.driver"
