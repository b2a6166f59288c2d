/* commands.h - one declaration per subcommand; each returns the exit status. */
#ifndef CD_COMMANDS_H
#define CD_COMMANDS_H

int cmd_nodeset(int argc, char **argv);
int cmd_facts(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_env(int argc, char **argv);
int cmd_fix(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_mnist(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_hang(int argc, char **argv);
int cmd_mpicheck(int argc, char **argv);
int cmd_tui(int argc, char **argv);

#endif
