/* SPDX-License-Identifier: MIT */
/* facts_python.c - the Python/torch probe and its per-node cache (see
 * facts_python.h). */
#include "probes/facts_python.h"
#include "probes/facts.h"
#include "probes/facts_pyfind.h"
#include "probes/facts_pyrun.h"
#include "probes/facts_pywarm.h"
#include "probes/facts_torch_bg.h"
#include "cd.h"
#include "fsutil.h"
#include "scan.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CACHE_MAX    (64u << 10)
#define CACHE_FORMAT 1
#define EXCERPT_MAX  60
/* The cap of a torch import that goes on in the background after the
 * request's deadline (facts_torch_bg.h); past it, it is killed as a hung one. */
#define TORCH_IMPORT_BACKGROUND_MS 300000

/*
 * Step 1. No f-strings: it must run on any Python 3. A namespace package
 * (origin None or "namespace") is not a usable torch. "paths" are the
 * directories where an import looks (sys.path, "" being the working
 * directory, and the user site directory, which site adds only once it
 * exists): their stat is part of the warm key (facts_pywarm.h).
 */
static const char info_script[] =
    "import json, os, sys\n"
    "def mt(p):\n"
    "    try:\n"
    "        return os.stat(p).st_mtime_ns\n"
    "    except Exception:\n"
    "        return None\n"
    "o = None\n"
    "try:\n"
    "    import importlib.util\n"
    "    s = importlib.util.find_spec('torch')\n"
    "    o = s.origin if s else None\n"
    "except Exception:\n"
    "    pass\n"
    "if not (o and os.path.isabs(o)):\n"
    "    o = None\n"
    "p = [os.path.abspath(d) for d in sys.path if isinstance(d, str)]\n"
    "try:\n"
    "    import site\n"
    "    p.append(site.getusersitepackages())\n"
    "except Exception:\n"
    "    pass\n"
    "e = sys.executable\n"
    "print(json.dumps({'executable': e,\n"
    "    'version': '%d.%d.%d' % tuple(sys.version_info[:3]),\n"
    "    'executable_mtime_ns': mt(e) if e else None, 'torch_origin': o,\n"
    "    'torch_mtime_ns': mt(os.path.dirname(o)) if o else None, 'paths': p}))\n";

/*
 * Step 2. os._exit skips the interpreter teardown, which with torch loaded
 * is slow and can hang on its threads. torch.cuda.nccl.version() is a tuple
 * in recent torch and an NCCL version code in old releases.
 */
static const char torch_script[] =
    "import json, os, sys, time\n"
    "t = time.monotonic()\n"
    "try:\n"
    "    import torch\n"
    "except BaseException as x:\n"
    "    print(json.dumps({'error': '%s: %s' % (type(x).__name__, x)}))\n"
    "    sys.stdout.flush()\n"
    "    os._exit(0)\n"
    "ms = int((time.monotonic() - t) * 1000)\n"
    "c = bool(torch.cuda.is_available())\n"
    "n = None\n"
    "if c:\n"
    "    try:\n"
    "        v = torch.cuda.nccl.version()\n"
    "        if isinstance(v, int):\n"
    "            v = (v // 10000, v % 10000 // 100, v % 100) if v >= 10000 else \\\n"
    "                (v // 1000, v % 1000 // 100, v % 100)\n"
    "        n = '.'.join(str(i) for i in v)\n"
    "    except Exception:\n"
    "        pass\n"
    "print(json.dumps({'version': str(torch.__version__), 'cuda_available': c,\n"
    "    'cuda_version': torch.version.cuda, 'nccl_version': n, 'import_ms': ms}))\n"
    "sys.stdout.flush()\n"
    "os._exit(0)\n";

/* The last non-empty line of s (n bytes), without surrounding blanks. */
static void last_line(const char *s, size_t n, const char **line, size_t *ln)
{
	const char *end = s + n, *start;

	while (end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	start = end;
	while (start > s && start[-1] != '\n')
		start--;
	while (start < end && (*start == ' ' || *start == '\t'))
		start++;
	*line = start;
	*ln = (size_t)(end - start);
}

/* Load the last line of a child's stdout as a JSON object. */
static json_t *load_last_line(const char *buf, size_t len, char *errbuf, size_t errlen)
{
	const char *line;
	size_t n;
	json_t *j;

	last_line(buf, len, &line, &n);
	if (n == 0) {
		cd_errf(errbuf, errlen, CD_ERR_PARSE, "printed nothing");
		return NULL;
	}
	j = json_loadb(line, n, 0, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		cd_errf(
		    errbuf, errlen, CD_ERR_PARSE, "printed something that is not JSON: \"%.*s%s\"",
		    (int)(n > EXCERPT_MAX ? EXCERPT_MAX : n), line, n > EXCERPT_MAX ? "..." : "");
		return NULL;
	}
	return j;
}

static int64_t opt_int(json_t *j)
{
	return json_is_integer(j) ? (int64_t)json_integer_value(j) : -1;
}

void facts_python_info_fini(struct facts_python_info *info)
{
	free(info->executable);
	free(info->version);
	free(info->torch_origin);
	json_decref(info->paths);
	memset(info, 0, sizeof(*info));
}

int facts_python_parse_info(const char *buf, size_t len, struct facts_python_info *out,
                            char *errbuf, size_t errlen)
{
	json_t *j = load_last_line(buf, len, errbuf, errlen), *exe, *ver, *origin, *p;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!j)
		return CD_ERR_PARSE;
	exe = json_object_get(j, "executable");
	ver = json_object_get(j, "version");
	origin = json_object_get(j, "torch_origin");
	if (!json_is_string(exe) || json_string_value(exe)[0] != '/' || !json_is_string(ver) ||
	    !(json_is_string(origin) || json_is_null(origin))) {
		json_decref(j);
		return cd_errf(errbuf, errlen, CD_ERR_PARSE,
		               "printed JSON without an absolute \"executable\", a \"version\" "
		               "and a \"torch_origin\"");
	}
	out->executable = cd_strdup(json_string_value(exe));
	out->version = cd_strdup(json_string_value(ver));
	out->torch_origin = json_is_string(origin) ? cd_strdup(json_string_value(origin)) : NULL;
	out->executable_mtime_ns = opt_int(json_object_get(j, "executable_mtime_ns"));
	out->torch_mtime_ns = opt_int(json_object_get(j, "torch_mtime_ns"));
	out->paths = json_array();
	json_array_foreach(json_object_get(j, "paths"), i, p)
	{
		if (json_is_string(p) && json_string_value(p)[0] == '/' &&
		    json_array_size(out->paths) < FACTS_PYWARM_PATHS_MAX)
			json_array_append(out->paths, p);
	}
	json_decref(j);
	return 0;
}

/* A copy of the torch fields of j in the documented order, or NULL when one
 * has the wrong type. with_import_ms: also copy "import_ms". */
static json_t *torch_fields(json_t *j, int with_import_ms)
{
	json_t *t;

	json_t *ver = json_object_get(j, "version"), *avail = json_object_get(j, "cuda_available");
	json_t *cuda = json_object_get(j, "cuda_version"),
	       *nccl = json_object_get(j, "nccl_version");
	json_t *ms = json_object_get(j, "import_ms");

	if (!json_is_string(ver) || !json_is_boolean(avail) ||
	    !(json_is_string(cuda) || json_is_null(cuda)) ||
	    !(json_is_string(nccl) || json_is_null(nccl)) ||
	    (with_import_ms && !json_is_integer(ms)))
		return NULL;
	t = json_pack("{s:O, s:O, s:O, s:O}", "version", ver, "cuda_available", avail,
	              "cuda_version", cuda, "nccl_version", nccl);
	if (with_import_ms)
		json_object_set(t, "import_ms", ms);
	return t;
}

int facts_python_parse_torch(const char *buf, size_t len, json_t **torch, char *errbuf,
                             size_t errlen)
{
	json_t *j = load_last_line(buf, len, errbuf, errlen), *e;
	int rc = 0;

	*torch = NULL;
	if (!j)
		return CD_ERR_PARSE;
	if (json_is_string(e = json_object_get(j, "error")))
		rc = cd_errf(errbuf, errlen, CD_ERR_IO, "import torch failed: %s",
		             json_string_value(e));
	else if (!(*torch = torch_fields(j, 1)))
		rc = cd_errf(errbuf, errlen, CD_ERR_PARSE,
		             "the torch probe printed JSON of the wrong shape");
	json_decref(j);
	return rc;
}

/* Describe how a run went wrong, or return 0 when it exited with status 0. */
static int run_failed(const char *who, const struct facts_pyrun *r, char *errbuf, size_t errlen)
{
	const char *line;
	size_t n;

	if (WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0)
		return 0;
	last_line(r->err, r->err_len, &line, &n);
	if (n > 160)
		n = 160;
	if (WIFEXITED(r->status))
		return cd_errf(errbuf, errlen, CD_ERR_IO, "%s exited with status %d%s%.*s", who,
		               WEXITSTATUS(r->status), n ? ": " : "", (int)n, line);
	return cd_errf(errbuf, errlen, CD_ERR_IO, "%s was killed by signal %d%s%.*s", who,
	               WTERMSIG(r->status), n ? ": " : "", (int)n, line);
}

/* "<dir>/python-facts-<hostname>.json"; NULL when there is no directory. */
static char *cache_file(const struct facts_opts *o)
{
	char host[HOST_NAME_MAX + 2] = "";
	const char *home = getenv("HOME");
	char *dir, *path;

	if (o->cache_dir)
		dir = cd_strdup(o->cache_dir);
	else if (home && home[0] == '/')
		dir = cd_asprintf("%s/.cache/clusterdoc", home);
	else
		return NULL;
	if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
		snprintf(host, sizeof(host), "unknown");
	for (char *c = host; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_",
		            *c))
			*c = '_';
	path = cd_asprintf("%s/python-facts-%s.json", dir, host);
	free(dir);
	return path;
}

/* The cached torch object for key, or NULL on any mismatch or damage. */
static json_t *cache_load(const char *path, json_t *key)
{
	json_t *j = NULL, *torch = NULL;
	char *data = NULL;
	size_t len;

	if (scan_read_file(path, CACHE_MAX, SCAN_FILE_TO_EOF, &data, &len, NULL, 0) < 0)
		goto out;
	j = json_loadb(data, len, 0, NULL);
	if (opt_int(json_object_get(j, "format")) != CACHE_FORMAT ||
	    !json_equal(json_object_get(j, "key"), key))
		goto out;
	torch = torch_fields(json_object_get(j, "torch"), 0);
out:
	json_decref(j);
	free(data);
	return torch;
}

/*
 * The warm answer (facts_pywarm.h): when the cache file's warm key still
 * holds for interpreter py, set *python and *torch (new) from it and return
 * 1; else 0. Starts no child. The paths the key is built from are the ones
 * the file recorded, so the stat()s compare like with like.
 */
static int warm_load(const char *path, const char *py, const char *gpu_driver, json_t **python,
                     json_t **torch)
{
	json_t *j = NULL, *key = NULL, *jpy, *exe, *ver, *origin;
	char *data = NULL;
	size_t len;
	int hit = 0;

	if (scan_read_file(path, CACHE_MAX, SCAN_FILE_TO_EOF, &data, &len, NULL, 0) < 0)
		goto out;
	j = json_loadb(data, len, 0, NULL);
	jpy = json_object_get(j, "python");
	exe = json_object_get(jpy, "path");
	ver = json_object_get(jpy, "version");
	origin = json_object_get(json_object_get(j, "key"), "torch_origin");
	if (opt_int(json_object_get(j, "format")) != CACHE_FORMAT || !json_is_string(exe) ||
	    !json_is_string(ver) || !json_is_string(origin) ||
	    !json_is_object(json_object_get(j, "warm")))
		goto out;
	key = facts_pywarm_key(py, json_string_value(exe), json_string_value(origin),
	                       json_object_get(j, "paths"), gpu_driver);
	if (!key || !json_equal(key, json_object_get(j, "warm")) ||
	    !(*torch = torch_fields(json_object_get(j, "torch"), 0)))
		goto out;
	*python = json_pack("{s:O, s:O}", "path", exe, "version", ver);
	hit = 1;
out:
	json_decref(key);
	json_decref(j);
	free(data);
	return hit;
}

/*
 * Write {format, key, torch, python, paths, warm} to path atomically: temp
 * file, then rename. key (the cold key, checked after step 1) and torch are
 * what every version of the agent reads; python, paths and warm (may be
 * NULL: then none of the three is written) make the warm answer.
 */
static int cache_store(const char *path, json_t *key, json_t *torch, json_t *python, json_t *paths,
                       json_t *warm, char *errbuf, size_t errlen)
{
	char *dir = cd_strdup(path), *tmp = cd_asprintf("%s.XXXXXX", path), *text = NULL;
	json_t *j =
	    json_pack("{s:i, s:O, s:O}", "format", CACHE_FORMAT, "key", key, "torch", torch);
	size_t len, done = 0;
	int fd = -1, rc = 0, created = 0;

	if (warm) {
		json_object_set(j, "python", python);
		json_object_set(j, "paths", paths);
		json_object_set(j, "warm", warm);
	}
	*strrchr(dir, '/') = '\0';
	if (dir[0] && (rc = cd_mkdir_p(dir, errbuf, errlen)) < 0)
		goto out;
	text = json_dumps(j, JSON_COMPACT);
	len = strlen(text);
	fd = mkstemp(tmp);
	if (fd < 0) {
		rc = cd_errf(errbuf, errlen, CD_ERR_IO, "cannot create %s: %s", tmp,
		             strerror(errno));
		goto out;
	}
	created = 1;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = cd_errf(errbuf, errlen, CD_ERR_IO, "cannot write %s: %s", tmp,
			             strerror(errno));
			goto out;
		}
		done += (size_t)n;
	}
	rc = close(fd);
	fd = -1;
	if (rc < 0 || rename(tmp, path) < 0) {
		rc = cd_errf(errbuf, errlen, CD_ERR_IO, "cannot write %s: %s", path,
		             strerror(errno));
		goto out;
	}
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0 && created)
		unlink(tmp);
	json_decref(j);
	free(text);
	free(tmp);
	free(dir);
	return rc;
}

static json_t *cache_key(const struct facts_python_info *info, const char *gpu_driver)
{
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	json_t *key = json_object();

	json_object_set_new(key, "executable",
	                    facts_json_text(info->executable, strlen(info->executable)));
	json_object_set_new(key, "version", facts_json_text(info->version, strlen(info->version)));
	json_object_set_new(key, "executable_mtime_ns", json_integer(info->executable_mtime_ns));
	json_object_set_new(key, "torch_origin",
	                    facts_json_text(info->torch_origin, strlen(info->torch_origin)));
	json_object_set_new(key, "torch_mtime_ns", json_integer(info->torch_mtime_ns));
	json_object_set_new(key, "gpu_driver",
	                    gpu_driver ? facts_json_text(gpu_driver, strlen(gpu_driver))
	                               : json_null());
	json_object_set_new(key, "cuda_visible_devices",
	                    cvd ? facts_json_text(cvd, strlen(cvd)) : json_null());
	return key;
}

/* Import torch in a child until deadline. Returns the torch object (with
 * "import_ms"), or NULL with the reason in errbuf. */
static json_t *import_torch(const char *executable, int64_t deadline, char *errbuf, size_t errlen)
{
	char *argv[] = {(char *)executable, (char *)"-c", (char *)torch_script, NULL};
	int64_t budget = deadline - cd_now_ms();
	json_t *torch = NULL;
	struct facts_pyrun r;
	int rc;

	rc = facts_pyrun_child(argv, deadline, &r, errbuf, errlen);
	if (rc == CD_ERR_TIMEOUT)
		snprintf(errbuf, errlen, "importing torch took longer than %.1f s",
		         (double)(budget > 0 ? budget : 0) / 1000);
	else if (rc == 0 && run_failed("the torch probe", &r, errbuf, errlen) == 0)
		facts_python_parse_torch(r.out, r.out_len, &torch, errbuf, errlen);
	free(r.out);
	return torch;
}

/* Import torch as the agent's own child, killed at the deadline (no cache
 * file: nothing could be warmed). NULL with errors["torch"] set. */
static json_t *probe_torch(const char *executable, int64_t deadline, json_t *errors)
{
	char err[CD_ERRLEN];
	json_t *torch = import_torch(executable, deadline, err, sizeof(err));

	if (!torch)
		facts_set_error(errors, "torch", err);
	return torch;
}

/* What a background import needs to store the cache, copied into the
 * finisher by the fork. */
struct bg_import {
	const char *executable, *cache;
	json_t *key, *python, *paths, *warm;
};

/*
 * In the finisher (facts_torch_bg.h): import torch under the long cap, store
 * the cache, then return the record {"torch": {...}} or {"error": "..."},
 * with "cache_error" when the store failed. Storing before reporting means
 * that whoever reads the record, or finds the lock free, finds the cache.
 */
static char *bg_import_work(void *arg)
{
	const struct bg_import *b = arg;
	json_t *rec = json_object(), *torch;
	char err[CD_ERRLEN];
	char *text;

	torch =
	    import_torch(b->executable, cd_now_ms() + TORCH_IMPORT_BACKGROUND_MS, err, sizeof(err));
	if (!torch) {
		json_object_set_new(rec, "error", facts_json_text(err, strlen(err)));
	} else {
		if (cache_store(b->cache, b->key, torch, b->python, b->paths, b->warm, err,
		                sizeof(err)) < 0)
			json_object_set_new(rec, "cache_error", facts_json_text(err, strlen(err)));
		json_object_set_new(rec, "torch", torch);
	}
	text = json_dumps(rec, JSON_COMPACT);
	json_decref(rec);
	return text;
}

/* The torch object of a finisher's record, or NULL with errors set. */
static json_t *bg_import_result(const char *record, json_t *errors)
{
	json_t *rec = json_loads(record, 0, NULL), *e, *torch = NULL;

	if (json_is_string(e = json_object_get(rec, "cache_error")))
		facts_set_error(errors, "cache", json_string_value(e));
	if (json_is_string(e = json_object_get(rec, "error")))
		facts_set_error(errors, "torch", json_string_value(e));
	else if (!(torch = torch_fields(json_object_get(rec, "torch"), 1)))
		facts_set_error(errors, "torch", "the torch import reported a malformed result");
	json_decref(rec);
	return torch;
}

/*
 * Import torch on a cache miss when there is a cache file: in a finisher
 * that outlives the deadline and warms the cache (facts_torch_bg.h), one at
 * a time per cache file. When an earlier import held the lock and ended in
 * time, its cache answers (*cached = 1) unless reload is 0 (--no-cache).
 * Returns the torch object ("import_ms" when not cached) or NULL with
 * errors["torch"] set.
 */
static json_t *probe_torch_bg(const struct bg_import *b, int reload, int64_t deadline,
                              json_t *errors, int *cached)
{
	double budget_s = (double)(deadline > cd_now_ms() ? deadline - cd_now_ms() : 0) / 1000;
	char err[CD_ERRLEN], *record = NULL;
	json_t *torch = NULL;
	int lock_fd = -1, rc;
	pid_t pid = 0;

	*cached = 0;
	rc = facts_torch_bg_lock(b->cache, deadline, &lock_fd, &pid, err, sizeof(err));
	if (rc == CD_ERR_IO) {
		/* no lock, no cache either: import as the agent's child, and let the
		 * store say why nothing is cached */
		if ((torch = probe_torch(b->executable, deadline, errors)) &&
		    cache_store(b->cache, b->key, torch, b->python, b->paths, b->warm, err,
		                sizeof(err)) < 0)
			facts_set_error(errors, "cache", err);
		return torch;
	}
	if (rc == CD_ERR_TIMEOUT) {
		char pidtext[32] = "";

		if (pid > 0)
			snprintf(pidtext, sizeof(pidtext), " (pid %ld)", (long)pid);
		snprintf(
		    err, sizeof(err),
		    "importing torch took longer than %.1f s; an earlier import on this node is "
		    "still running%s and its facts are cached when it ends",
		    budget_s, pidtext);
		facts_set_error(errors, "torch", err);
		return NULL;
	}
	if (rc == 1 && reload && (torch = cache_load(b->cache, b->key))) {
		close(lock_fd);
		*cached = 1;
		return torch;
	}
	rc = facts_torch_bg_run(lock_fd, deadline, bg_import_work, (void *)b, &record, &pid, err,
	                        sizeof(err));
	if (rc == CD_ERR_TIMEOUT)
		snprintf(err, sizeof(err),
		         "importing torch took longer than %.1f s; the import goes on in the "
		         "background (pid %ld) and its facts are cached when it ends",
		         budget_s, (long)pid);
	if (rc < 0)
		facts_set_error(errors, "torch", err);
	else
		torch = bg_import_result(record, errors);
	free(record);
	return torch;
}

/*
 * The login python3 has no torch (or there is none): which interpreters in
 * conda's and virtualenv's usual places have it (facts_pyfind.h). Each
 * candidate runs step 1 only (no torch import), within the probe's deadline.
 * Returns facts["python_candidates"]: [{"path", "version"}], possibly empty.
 */
static json_t *find_torch_pythons(int64_t deadline, const char *probed)
{
	json_t *found = json_array();
	char **paths = NULL;
	size_t n = facts_pyfind_candidates(getenv("HOME"), getenv("CONDA_PREFIX"), &paths);

	for (size_t i = 0; i < n && cd_now_ms() < deadline; i++) {
		char *argv[] = {paths[i], (char *)"-c", (char *)info_script, NULL};
		struct facts_python_info info = {0};
		char err[CD_ERRLEN];
		struct facts_pyrun r = {0};

		/* the login interpreter was just asked: it has no torch */
		if (probed && strcmp(paths[i], probed) == 0)
			continue;
		if (facts_pyrun_child(argv, deadline, &r, err, sizeof(err)) == 0 &&
		    run_failed(paths[i], &r, err, sizeof(err)) == 0 &&
		    facts_python_parse_info(r.out, r.out_len, &info, err, sizeof(err)) == 0 &&
		    info.torch_origin)
			json_array_append_new(
			    found, json_pack("{s:o, s:o}", "path",
			                     facts_json_text(paths[i], strlen(paths[i])), "version",
			                     facts_json_text(info.version, strlen(info.version))));
		facts_python_info_fini(&info);
		free(r.out);
	}
	facts_pyfind_free(paths);
	return found;
}

void facts_python_collect(const struct facts_opts *opts, const char *gpu_driver, json_t *facts,
                          json_t *errors)
{
	const char *py = opts->python ? opts->python : "python3";
	char *argv[] = {(char *)py, (char *)"-c", (char *)info_script, NULL};
	int64_t deadline = cd_now_ms() + opts->python_timeout_ms;
	struct facts_python_info info = {0};
	json_t *python = json_null(), *torch = json_null(), *key = NULL, *warm = NULL, *t, *ms;
	char err[CD_ERRLEN], msg[CD_ERRLEN + 64], *cache = NULL;
	struct facts_pyrun r;
	int rc, cached = 0;

	cache = cache_file(opts);
	if (cache && !opts->no_cache && warm_load(cache, py, gpu_driver, &t, &torch)) {
		json_decref(python);
		python = t;
		json_object_set_new(torch, "cached", json_true());
		goto out;
	}
	rc = facts_pyrun_child(argv, deadline, &r, err, sizeof(err));
	if (rc == CD_ERR_NOTFOUND && !opts->python)
		goto search; /* no python3 on this node: a fact, not an error */
	if (rc == CD_ERR_TIMEOUT)
		snprintf(msg, sizeof(msg), "%s did not answer within %.1f s", py,
		         (double)opts->python_timeout_ms / 1000);
	else if (rc < 0)
		snprintf(msg, sizeof(msg), "%s", err); /* names py already */
	else if ((rc = run_failed(py, &r, msg, sizeof(msg))) == 0 &&
	         (rc = facts_python_parse_info(r.out, r.out_len, &info, err, sizeof(err))) < 0)
		snprintf(msg, sizeof(msg), "%s %s", py, err);
	free(r.out);
	if (rc < 0) {
		facts_set_error(errors, "python", msg);
		goto out;
	}
	json_decref(python);
	python = json_pack("{s:o, s:o}", "path",
	                   facts_json_text(info.executable, strlen(info.executable)), "version",
	                   facts_json_text(info.version, strlen(info.version)));
	if (!info.torch_origin)
		goto search; /* torch is not installed: null, no import */

	key = cache_key(&info, gpu_driver);
	warm = facts_pywarm_key(py, info.executable, info.torch_origin, info.paths, gpu_driver);
	if (cache && !opts->no_cache && (t = cache_load(cache, key))) {
		/* the same torch, but the warm key changed: record the new one, so
		 * that the next request starts no Python */
		if (cache_store(cache, key, t, python, info.paths, warm, err, sizeof(err)) < 0)
			facts_set_error(errors, "cache", err);
		json_object_set_new(t, "cached", json_true());
		json_decref(torch);
		torch = t;
		goto out;
	}
	if (cache) {
		struct bg_import b = {.executable = info.executable,
		                      .cache = cache,
		                      .key = key,
		                      .python = python,
		                      .paths = info.paths,
		                      .warm = warm};

		t = probe_torch_bg(&b, !opts->no_cache, deadline, errors, &cached);
	} else {
		t = probe_torch(info.executable, deadline, errors);
		if (t)
			facts_set_error(errors, "cache",
			                "HOME is not set: the torch facts are not cached");
	}
	if (!t)
		goto out;
	if (cached) {
		json_object_set_new(t, "cached", json_true());
		json_decref(torch);
		torch = t;
		goto out;
	}
	/* "cached" goes before "import_ms", as documented */
	ms = json_incref(json_object_get(t, "import_ms"));
	json_object_del(t, "import_ms");
	json_object_set_new(t, "cached", json_false());
	json_object_set_new(t, "import_ms", ms);
	json_decref(torch);
	torch = t;
	goto out;
search:
	if (!opts->python)
		json_object_set_new(facts, "python_candidates",
		                    find_torch_pythons(deadline, info.executable));
out:
	json_object_set_new(facts, "python", python);
	json_object_set_new(facts, "torch", torch);
	facts_python_info_fini(&info);
	json_decref(key);
	json_decref(warm);
	free(cache);
}
