#!/usr/bin/env python3
"""Count the records of .gtrace files by kind, without the gputrace analyzer (the GPU machine has
none). Offsets follow format/gtrace_format.h (format 1.x); CRCs are not checked here.

    gtrace_count.py FILE.gtrace...          one markdown row per file
    gtrace_count.py --json FILE.gtrace...   one JSON object per file
"""
import json
import struct
import sys

KINDS = {2: "lost", 3: "clock_sync", 10: "api", 11: "api_memcpy", 12: "api_memset", 13: "api_alloc",
         14: "api_launch", 15: "api_sync", 16: "api_cudnn", 17: "api_cublas", 20: "cudnn_plan",
         30: "nvtx", 50: "gpu_kernel", 51: "gpu_memcpy", 52: "gpu_memset", 53: "gpu_sync",
         54: "gpu_ext_corr", 55: "gpu_api", 56: "cupti_stats"}
MEM = {0: "unknown", 1: "pageable", 2: "pinned", 3: "device", 4: "array", 5: "managed"}
COPY = {1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD",
        9: "HtoH", 10: "PtoP"}
CUPTI_STATE = {0: "unknown", 1: "active", 2: "not_found", 3: "other_subscriber", 4: "no_device",
               5: "disabled", 6: "failed"}


def count(path):
    data = open(path, "rb").read()
    if data[:8] != b"GPUTRACE":
        raise ValueError(f"{path}: not a gputrace trace")
    header_size = struct.unpack_from("<I", data, 12)[0]
    flags = struct.unpack_from("<I", data, 68)[0]
    cupti_version, = struct.unpack_from("<i", data, 156)
    cupti_state, = struct.unpack_from("<I", data, 164)
    out = {"file": path, "cupti_state": CUPTI_STATE.get(cupti_state, str(cupti_state)),
           "cupti_version": cupti_version, "static_cudart_flag": bool(flags & 2), "kinds": {},
           "memcpy": {}, "sync_types": {}, "lost": 0, "truncated": False}
    off = header_size
    while off + 24 <= len(data):
        magic, plen, _seq, _crc, _count, _tid = struct.unpack_from("<6I", data, off)
        if magic != 0x4B435447 or off + 24 + plen > len(data):
            out["truncated"] = True
            break
        pos, end = off + 24, off + 24 + plen
        while pos + 8 <= end:
            kind, _f, size = struct.unpack_from("<HHI", data, pos)
            if size < 8 or pos + size > end:
                break
            body = pos + 8
            if kind:
                name = KINDS.get(kind, f"kind{kind}")
                out["kinds"][name] = out["kinds"].get(name, 0) + 1
            if kind == 51:
                ck, sk, dk = struct.unpack_from("<3B", data, body + 60)
                key = f"{COPY.get(ck, ck)} {MEM.get(sk, sk)}->{MEM.get(dk, dk)}"
                out["memcpy"][key] = out["memcpy"].get(key, 0) + 1
            elif kind == 53:
                st, = struct.unpack_from("<I", data, body + 32)
                out["sync_types"][st] = out["sync_types"].get(st, 0) + 1
            elif kind == 2:
                out["lost"] += struct.unpack_from("<Q", data, body)[0]
            pos += size
        off = end
    return out


def main(argv):
    as_json = "--json" in argv
    files = [a for a in argv if a != "--json"]
    cols = ["gpu_kernel", "gpu_memcpy", "gpu_memset", "gpu_sync", "gpu_ext_corr", "gpu_api",
            "api_launch", "api_memcpy", "api_sync", "api_cudnn"]
    if not as_json:
        print("| file | cupti | static | " + " | ".join(cols) + " | lost | memcpy detail |")
        print("|---" * (len(cols) + 5) + "|")
    for f in files:
        c = count(f)
        if as_json:
            print(json.dumps(c, sort_keys=True))
            continue
        detail = ", ".join(f"{k}: {v}" for k, v in sorted(c["memcpy"].items()))
        print(f"| {f.split('/')[-1]} | {c['cupti_state']} | {'yes' if c['static_cudart_flag'] else 'no'} | "
              + " | ".join(str(c["kinds"].get(k, 0)) for k in cols) + f" | {c['lost']} | {detail} |")


if __name__ == "__main__":
    main(sys.argv[1:])
