/* SPDX-License-Identifier: MIT */
/*
 * completion.h - shell completion scripts made from the command table
 * (command.h): every command's name and summary, and the long options its
 * --help lists (its groups', the targets', --help). `make` writes them with
 * the built head and `make install` puts them where bash-completion and zsh
 * look, so a new option of a group is completed without touching a script.
 */
#ifndef CD_COMPLETION_H
#define CD_COMPLETION_H

#include <stdio.h>

/* Write the completion script of shell ("bash" or "zsh") for commands[] to
 * f. Returns 0, or -1 when shell is neither (nothing written). */
int completion_write(FILE *f, const char *shell);

/* `clusterdoc completion bash|zsh`: the script on stdout. Exit status 0, or
 * 2 with the usage on stderr for another word. argv[0] is "completion". */
int cmd_completion(int argc, char **argv);

#endif
