/* SPDX-License-Identifier: MIT */
/*
 * facts_pyfind.h - where to look for a Python that has torch when the login
 * python3 has none: conda's and virtualenv's usual places.
 */
#ifndef CD_PROBES_FACTS_PYFIND_H
#define CD_PROBES_FACTS_PYFIND_H

#include <stddef.h>

#define FACTS_PYFIND_MAX 32 /* candidates listed at most */

/*
 * The interpreters that exist (regular files, executable by us, symlinks
 * followed) in the usual places, in this order:
 *   $CONDA_PREFIX/bin/python (conda_prefix, may be NULL),
 *   for each of HOME/miniconda3, HOME/anaconda3, HOME/miniforge3,
 *     HOME/mambaforge and /opt/conda: its envs/NAME/bin/python (sorted by
 *     NAME), then its base bin/python,
 *   HOME/.venv/bin/python, bin/python in each HOME/venv<anything> (sorted),
 *   HOME/.virtualenvs/NAME/bin/python.
 * home may be NULL or relative (no HOME places then). A path is listed once,
 * by its first place; at most FACTS_PYFIND_MAX. Returns the count and sets
 * *paths to a NULL-terminated array of new strings (facts_pyfind_free).
 */
size_t facts_pyfind_candidates(const char *home, const char *conda_prefix, char ***paths);
void facts_pyfind_free(char **paths);

#endif
