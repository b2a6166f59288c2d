/* SPDX-License-Identifier: MIT */
/*
 * hangready.c - the hang-ready files and environment of a run (see
 * hangready.h).
 */
#include "jobs/hangready.h"
#include "cd.h"
#include "sha256.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The sitecustomize. Python imports the first sitecustomize on sys.path at
 * start-up (site.py), PYTHONPATH's entries come first, so this one runs in
 * every Python process of the job, torchrun and its workers alike. Its
 * stacks go to a file of its own per process rather than to stderr: the
 * ranks' stderr is the run's live log, where the dumps of many ranks at
 * once would interleave line by line; a file keeps each dump whole and
 * named. A child forked later (a DataLoader worker) gets its own file.
 * The marker line lets a copy of this file on the path (a nested run) be
 * told from a user's sitecustomize, so that chaining never loops.
 */
static const char site_py[] =
    "# clusterdoc-hang-ready: written by `clusterdoc run` (docs/run.md, \"Ready for a hang\").\n"
    "# On CLUSTERDOC_DUMP_SIGNAL every thread's stack goes to py_stacks_<host>_<pid>.txt\n"
    "# beside this file and the process goes on; then the sitecustomize this one hides\n"
    "# runs. Nothing here may fail the job: a problem is one line on stderr.\n"
    "import sys\n"
    "\n"
    "_MARK = b\"clusterdoc-hang-ready\"\n"
    "_clusterdoc_stacks = None\n"
    "\n"
    "\n"
    "def _clusterdoc_warn(what, exc):\n"
    "    try:\n"
    "        sys.stderr.write(\"clusterdoc hang-ready: %s: %s\\n\" % (what, exc))\n"
    "    except Exception:\n"
    "        pass\n"
    "\n"
    "\n"
    "def _clusterdoc_register():\n"
    "    global _clusterdoc_stacks\n"
    "    try:\n"
    "        import faulthandler\n"
    "        import os\n"
    "        import signal\n"
    "        import socket\n"
    "\n"
    "        name = os.environ.get(\"CLUSTERDOC_DUMP_SIGNAL\", \"SIGUSR2\")\n"
    "        signum = getattr(signal, name, None)\n"
    "        if not name.startswith(\"SIG\") or not isinstance(signum, int):\n"
    "            raise ValueError(\"no signal named %r\" % name)\n"
    "        here = os.path.dirname(os.path.abspath(__file__))\n"
    "        host = socket.gethostname().replace(\"/\", \"_\") or \"node\"\n"
    "        path = os.path.join(here, \"py_stacks_%s_%d.txt\" % (host, os.getpid()))\n"
    "        f = open(path, \"a\")\n"
    "        try:\n"
    "            with open(\"/proc/self/cmdline\", \"rb\") as c:\n"
    "                cmd = c.read().replace(b\"\\0\", b\" \").decode(\"utf-8\", \"replace\")\n"
    "            cmd = \" \".join(cmd.split())[:400]\n"
    "        except OSError:\n"
    "            cmd = \"?\"\n"
    "        f.write(\"# pid %d rank %s local_rank %s: %s\\n\" % (\n"
    "            os.getpid(), os.environ.get(\"RANK\", \"-\"),\n"
    "            os.environ.get(\"LOCAL_RANK\", \"-\"), cmd))\n"
    "        f.flush()\n"
    "        faulthandler.register(signum, file=f, all_threads=True, chain=False)\n"
    "        old, _clusterdoc_stacks = _clusterdoc_stacks, f\n"
    "        if old is not None:\n"
    "            old.close()\n"
    "    except Exception as e:\n"
    "        _clusterdoc_warn(\"stack dumps not set up\", e)\n"
    "\n"
    "\n"
    "def _clusterdoc_chain():\n"
    "    import os\n"
    "\n"
    "    here = os.path.dirname(os.path.abspath(__file__))\n"
    "    dirs = [os.path.abspath(p or os.curdir) for p in sys.path]\n"
    "    later = dirs[dirs.index(here) + 1:] if here in dirs else dirs\n"
    "    for d in later:\n"
    "        cand = os.path.join(d, \"sitecustomize.py\")\n"
    "        if d == here or not os.path.isfile(cand):\n"
    "            continue\n"
    "        try:\n"
    "            with open(cand, \"rb\") as f:\n"
    "                if _MARK in f.read(512):\n"
    "                    continue  # another run's copy of this file\n"
    "            import importlib.util\n"
    "\n"
    "            spec = importlib.util.spec_from_file_location(\n"
    "                \"_clusterdoc_chained_sitecustomize\", cand)\n"
    "            mod = importlib.util.module_from_spec(spec)\n"
    "            sys.modules[spec.name] = mod\n"
    "            spec.loader.exec_module(mod)\n"
    "        except BaseException as e:\n"
    "            _clusterdoc_warn(\"%s failed\" % cand, e)\n"
    "        return\n"
    "\n"
    "\n"
    "if not getattr(sys, \"_clusterdoc_hang_ready\", False):\n"
    "    sys._clusterdoc_hang_ready = True\n"
    "    _clusterdoc_register()\n"
    "    try:\n"
    "        import os as _os\n"
    "\n"
    "        _os.register_at_fork(after_in_child=_clusterdoc_register)\n"
    "    except Exception as _e:\n"
    "        _clusterdoc_warn(\"forked children share the parent's stack file\", _e)\n"
    "    try:\n"
    "        _clusterdoc_chain()\n"
    "    except Exception as _e:\n"
    "        _clusterdoc_warn(\"the hidden sitecustomize was not looked for\", _e)\n";

/* "2.1.0+cu121" as 201; 0 when unknown or unparsable. */
static int torch_release(const char *v)
{
	int major = 0, minor = 0;

	if (!v || !*v || sscanf(v, "%d.%d", &major, &minor) != 2)
		return 0;
	return major * 100 + minor;
}

/* "2.1.0+cu121" < 2.2; unknown or unparsable: not older. */
static int torch_older_than_2_2(const char *v)
{
	int major = 0, minor = 0;

	if (!v || !*v || sscanf(v, "%d.%d", &major, &minor) != 2)
		return 0;
	return major < 2 || (major == 2 && minor < 2);
}

static int has_control(const char *s)
{
	for (; s && *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	}
	return 0;
}

static void add_env(struct hangready *h, char *take)
{
	if (h->nenv == HANGREADY_MAX_ENV)
		cd_fatal("hangready: more than %d variables", HANGREADY_MAX_ENV);
	h->env[h->nenv++] = take;
}

int hangready_build(const char *run_dir, const char *torch_version, const char *existing_pythonpath,
                    struct hangready *h, char *err, size_t errlen)
{
	size_t len;
	char *dir;

	memset(h, 0, sizeof(*h));
	if (!run_dir || !*run_dir || (run_dir[0] != '/' && strncmp(run_dir, "~/", 2) != 0))
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "run directory \"%.200s\" must be absolute or start with ~/",
		               run_dir ? run_dir : "");
	if (strchr(run_dir, ':') || has_control(run_dir))
		return cd_errf(err, errlen, CD_ERR_PARSE,
		               "run directory \"%.200s\" cannot go into PYTHONPATH (a ':' or a "
		               "control character)",
		               run_dir);
	if (has_control(existing_pythonpath))
		return cd_errf(err, errlen, CD_ERR_PARSE, "PYTHONPATH holds a control character");
	len = strlen(run_dir);
	while (len > 1 && run_dir[len - 1] == '/')
		len--;
	dir = cd_asprintf("%.*s/hang", (int)len, run_dir);

	h->site.rel = cd_strdup("hang/sitecustomize.py");
	h->site.mode = 0644;
	h->site.len = sizeof(site_py) - 1;
	h->site.data = cd_malloc(h->site.len);
	memcpy(h->site.data, site_py, h->site.len);
	sha256_data_hex(h->site.data, h->site.len, h->site.sha256);

	if (!torch_older_than_2_2(torch_version)) {
		/* torch 2.8 renamed the ring's size TORCH_FR_BUFFER_SIZE (the
		 * Flight Recorder made backend-neutral, pytorch/pytorch#152563,
		 * May 2025) and warns "TORCH_NCCL_TRACE_BUFFER_SIZE is deprecated"
		 * into the job's log where the old name is given; before 2.8 only
		 * the old name is read. An unknown version gets the old name, read
		 * by every torch. The file and pipe names are still read under
		 * their TORCH_NCCL_* names and no warning about them was seen
		 * (torch 2.11), so they stay. */
		add_env(h, cd_asprintf("%s=%d",
		                       torch_release(torch_version) >= 208
		                           ? "TORCH_FR_BUFFER_SIZE"
		                           : "TORCH_NCCL_TRACE_BUFFER_SIZE",
		                       HANGREADY_TRACE_ENTRIES));
		add_env(h, cd_strdup("TORCH_NCCL_DUMP_ON_TIMEOUT=1"));
		add_env(h, cd_asprintf("TORCH_NCCL_DEBUG_INFO_TEMP_FILE=%s/nccl_trace_rank_", dir));
		add_env(h, cd_asprintf("TORCH_NCCL_DEBUG_INFO_PIPE_FILE=%s/nccl_trace_pipe_", dir));
	}
	if (existing_pythonpath && *existing_pythonpath)
		add_env(h, cd_asprintf("PYTHONPATH=%s:%s", dir, existing_pythonpath));
	else
		add_env(h, cd_asprintf("PYTHONPATH=%s", dir));
	add_env(h, cd_strdup("CLUSTERDOC_DUMP_SIGNAL=SIGUSR2"));
	h->dump_signal = SIGUSR2;
	free(dir);
	return 0;
}

void hangready_free(struct hangready *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->nenv; i++)
		free(h->env[i]);
	free(h->site.rel);
	free(h->site.data);
	memset(h, 0, sizeof(*h));
}
