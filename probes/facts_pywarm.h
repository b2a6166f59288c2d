/* SPDX-License-Identifier: MIT */
/*
 * facts_pywarm.h - the warm key of the Python/torch facts: everything that
 * can change what the Python probe answers, computed in the agent from
 * stat() and the environment, so that a warm facts request starts no Python.
 *
 * The probe (facts_python.h) records, next to its cached answer, the
 * interpreter it ran (sys.executable), torch's origin and the directories on
 * sys.path (plus the user site directory). A later request builds this key
 * again from those recorded paths and compares: when it is equal, the cached
 * python and torch facts are the answer and no child is started.
 *
 * The key holds:
 *   interpreter  the interpreter as asked for ("python3" or --python), the
 *                file it resolves to through PATH (execvp's search) and that
 *                file's stat;
 *   env          PATH, PYTHONPATH, PYTHONHOME, PYTHONUSERBASE,
 *                PYTHONNOUSERSITE, PYTHONSAFEPATH, VIRTUAL_ENV, CONDA_PREFIX,
 *                CUDA_VISIBLE_DEVICES (null when unset) and the working
 *                directory (python -c puts it first on sys.path);
 *   gpu_driver   the NVML driver version (null without one);
 *   files        [path, stat] for the recorded executable, torch's
 *                __init__.py, its package directory and every recorded
 *                sys.path directory, in that order.
 * A stat is "dev:ino:size:mode:mtime_ns:ctime_ns" of the file (symlinks
 * followed), or "missing". Installing, removing or upgrading a package
 * changes its site-packages directory's mtime or replaces __init__.py (new
 * inode), so both are noticed; a .pth file edited in place is not (use
 * --no-cache then).
 */
#ifndef CD_PROBES_FACTS_PYWARM_H
#define CD_PROBES_FACTS_PYWARM_H

#include <jansson.h>

#define FACTS_PYWARM_PATHS_MAX 64 /* sys.path directories kept in a key */

/*
 * The warm key (new object, caller decrefs). py is the interpreter as asked
 * for: a name without '/' is searched in $PATH as execvp does, a path is
 * taken as it is. executable and torch_origin are the recorded sys.executable
 * and torch origin (borrowed, may be NULL); paths is the recorded array of
 * sys.path directories (borrowed, may be NULL; entries that are not strings
 * and those past FACTS_PYWARM_PATHS_MAX are skipped). gpu_driver may be
 * NULL. Returns NULL when py cannot be found: then there is no warm answer.
 */
json_t *facts_pywarm_key(const char *py, const char *executable, const char *torch_origin,
                         json_t *paths, const char *gpu_driver);

/*
 * The file execvp would run for name (new string, caller frees): name itself
 * when it contains '/', else the first regular executable file name in a
 * $PATH directory (an empty entry is the working directory; unset PATH is
 * "/bin:/usr/bin", as in glibc). NULL when there is none.
 */
char *facts_pywarm_which(const char *name);

#endif
