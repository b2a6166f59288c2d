/*
 * homeid.h - the home directory's identity token, shared by the fixes
 * (fixers/fix_gather.c: which nodes share a home, so a file there is changed
 * once) and the run's file push (jobs/run_put.c: which nodes see one tree).
 *
 * The fix flow's gather reads the token, then replaces it with a fresh one
 * of its run if it is still what it read (file_write's "expect"), and every
 * node reads back the token that stayed: nodes sharing the home read the
 * one that won, and a token copied with a node image is replaced on each
 * node by its own, so separate homes never look shared. The run's push
 * writes one only where none is, and proves sharing by putting the files on
 * every follower too (jobs/run_put.h).
 */
#ifndef CD_CORE_HOMEID_H
#define CD_CORE_HOMEID_H

#define CD_HOME_ID "~/.local/state/clusterdoc/home-id"

#endif
