"""Python caller for the call-site tests: reaches gputrace through ctypes so the innermost Python
frame (file, function, line) is known. Lines marked with '# @name' are found by test_stacks.py.

  gil:    gt_stack_capture through ctypes.PyDLL (the GIL stays held during the call)
  nogil:  the same through ctypes.CDLL (ctypes releases the GIL around the call)
  cuda:   cudaStreamSynchronize of the fake libcudart.so.13 through ctypes.PyDLL
  sites:  the same through ctypes.CDLL from two lines, three times each
"""
import ctypes
import sys


def capture_with_gil():
    f = ctypes.PyDLL(None).gt_stack_capture
    f.restype, f.argtypes = ctypes.c_uint32, [ctypes.c_int]
    return f(1)  # @gil


def capture_without_gil():
    f = ctypes.CDLL(None).gt_stack_capture
    f.restype, f.argtypes = ctypes.c_uint32, [ctypes.c_int]
    return f(1)  # @nogil


def sync_fake_cuda():
    cudart = ctypes.PyDLL("libcudart.so.13")
    return cudart.cudaStreamSynchronize(None)  # @cuda


def sync_from_two_lines():
    """Same native return address into the wrapper, two Python lines: the call-site cache must
    keep them apart, and give each line one stack however often it runs."""
    cudart = ctypes.CDLL("libcudart.so.13")  # CDLL: the GIL is released, as PyTorch does
    for _ in range(3):
        cudart.cudaStreamSynchronize(None)  # @site_a
    for _ in range(3):
        cudart.cudaStreamSynchronize(None)  # @site_b


def train_step(mode):
    if mode == "sites":
        return sync_from_two_lines()
    if mode == "gil":
        return capture_with_gil()  # @train_step
    if mode == "nogil":
        return capture_without_gil()
    return sync_fake_cuda()


if __name__ == "__main__":
    print(sys.argv[1], train_step(sys.argv[1]))
