/* SPDX-License-Identifier: MIT */
/*
 * commands.h - each subcommand's row of the command table (command.h) and
 * its function, which returns the exit status. The rows are defined beside
 * their commands, in cli/cmd_*.c; cli/main.c lists them.
 */
#ifndef CD_COMMANDS_H
#define CD_COMMANDS_H

#include "command.h"

extern const struct command command_facts, command_check, command_env, command_fix, command_bench,
    command_mnist, command_run, command_hang, command_gpuburn, command_mpicheck, command_tui,
    command_nodeset, command_config;

int cmd_nodeset(int argc, char **argv);
int cmd_facts(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_env(int argc, char **argv);
int cmd_fix(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_mnist(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_hang(int argc, char **argv);
int cmd_gpuburn(int argc, char **argv);
int cmd_mpicheck(int argc, char **argv);
int cmd_tui(int argc, char **argv);
int cmd_config(int argc, char **argv);

#endif
