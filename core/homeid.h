/*
 * homeid.h - the home directory's identity token, shared by the fixes
 * (fixers/fix_gather.c: which nodes share a home, so a file there is changed
 * once) and the run's file push (jobs/run_put.c: which nodes see one tree).
 *
 * The first node to look writes a random token to CD_HOME_ID if none is
 * there (O_EXCL); every node then reads the token that stayed. Nodes that
 * read the same token saw the same file, unless the token was copied (nodes
 * built from one image): a flow that must not trust a copy proves sharing
 * afresh (jobs/run_put.h).
 */
#ifndef CD_CORE_HOMEID_H
#define CD_CORE_HOMEID_H

#define CD_HOME_ID "~/.local/state/clusterdoc/home-id"

#endif
