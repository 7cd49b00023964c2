# ti_local.py LIB — the PyTorch case: load a library that depends on libcudnn.so.9 with
# RTLD_LOCAL through ctypes, and run backend plans through it.
import ctypes
import os
import sys

lib = ctypes.CDLL(sys.argv[1], mode=os.RTLD_LOCAL | os.RTLD_NOW)
rc = lib.run_plans(5)
if rc != 0:
    print("run_plans returned", rc)
sys.exit(rc)
