/* doctor_cli.c — `gputrace-doctor`, the doctor alone: the same code as `gputrace doctor`, built
 * without the analyzer's dependencies (protobuf-c, jansson) so it runs on any GPU machine with a C
 * compiler (tools/gpu/doctor.sh). */
#include "doctor.h"

int main(int argc, char **argv)
{
    return cmd_doctor(argc, argv);
}
