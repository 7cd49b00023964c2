# launch_durations.awk — the mean recorded time of kernel launch calls in a cupti_dump of a trace:
# a static runtime's launches (recorded from CUPTI's callbacks, flags=16) beside CUPTI's own API record
# of the same launch (paired by the callback's external correlation), and a shared runtime's
# (wrapped) launches. Usage: awk -f tools/gpu/launch_durations.awk DUMP
$1 == "cpucall" && $0 ~ /name=(__)?cudaLaunchKernel / && $0 ~ /flags=16$/ { split($4, a, "="); via[a[2]] = 1 }
$1 == "cpucall" && $0 ~ /name=(__)?cudaLaunchKernel / && $0 !~ /flags=16$/ { split($4, a, "="); shared[a[2]] = 1 }
$1 == "cpudur" { split($2, a, "="); split($3, d, "="); dur[a[2]] = d[2] }
$1 == "extcorr" { split($3, e, "="); split($4, k, "="); ext2k[e[2]] = k[2] }
$1 == "gpuapidur" { split($2, a, "="); split($3, d, "="); api[a[2]] = d[2] }
END {
  for (id in via) { n++; ours += dur[id]; if (ext2k[id] in api) { m++; cupti += api[ext2k[id]]; ours_m += dur[id] } }
  for (id in shared) { ns++; sh += dur[id] }
  if (n) printf "static launches %d: ours %.2f us; with a CUPTI API record %d: ours %.2f us, CUPTI %.2f us\n", n, ours/n/1000, m, m ? ours_m/m/1000 : 0, m ? cupti/m/1000 : 0
  if (ns) printf "shared launches %d: %.2f us\n", ns, sh/ns/1000
}
