/* commands.h — the gputrace subcommands. Each takes main's argc/argv shifted so argv[0] is the
 * subcommand name, prints its own --help, and returns the process exit status. */
#ifndef GT_COMMANDS_H
#define GT_COMMANDS_H

int cmd_info(int argc, char **argv);    /* cmd_info.c */
int cmd_convert(int argc, char **argv); /* cmd_convert.c */
int cmd_report(int argc, char **argv);  /* cmd_report.c */
int cmd_diff(int argc, char **argv);    /* cmd_diff.c */
int cmd_record(int argc, char **argv);  /* cmd_record.c */
int cmd_doctor(int argc, char **argv);  /* doctor/doctor_main.c */
int cmd_archive(int argc, char **argv); /* cmd_archive.c */

#endif
