# Sourced by the tools/gpu scripts that use what tools/gpu/pack_devbin.sh packed here (carry
# .devbin): LIB (libgputrace.so), GT (the analyzer), DUMP (cupti_dump), the analyzer's
# libprotobuf-c on LD_LIBRARY_PATH. Stops the script when .devbin was not carried.
LIB=$PWD/.devbin/lib/libgputrace.so
GT=$PWD/.devbin/bin/gputrace
DUMP=$PWD/.devbin/bin/cupti_dump
export LD_LIBRARY_PATH=$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -f "$LIB" ] && [ -x "$GT" ] || { echo "no .devbin: run tools/gpu/pack_devbin.sh here and carry .devbin"; exit 1; }
