"""The Triton kernel of tiny_launches.py, in its own module: Triton reads a kernel's source and its
module's globals (tl), and the CuPy path of tiny_launches.py must not import Triton or PyTorch."""
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, y + 1.0, mask=mask)


def launch(y, n, block=1024):
    add_one_kernel[(triton.cdiv(n, block),)](y, n, BLOCK=block)
