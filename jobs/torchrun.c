/* SPDX-License-Identifier: MIT */
/*
 * torchrun.c - the torchrun command line, the interface variables and the
 * error lines of a job's output, shared by mnist and run (torchrun.h).
 */
#include "jobs/torchrun.h"
#include "cd.h"
#include "probes/netmodel.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/*
 * torchrun, run through `python -c` so one known defect can be worked
 * around: torch before 2.0 on Python 3.11+ cannot parse its own default
 * --redirects/--tee ("0"), because Flag enums no longer iterate over their
 * zero and alias members, and torchrun dies with "AttributeError: 'NoneType'
 * object has no attribute 'get'" (Debian 12's python3-torch 1.13 does).
 * Where that defect is present, Std.from_str is replaced for this run and a
 * line on node 0's stderr says so (once per job, not once per node);
 * elsewhere this is exactly `torchrun ARGS`.
 */
static const char torchrun_shim[] =
    "import re, sys\n"
    "from torch.distributed.elastic.multiprocessing import api\n"
    "if api.Std.from_str('0') is None:\n"
    "    def from_str(vm):\n"
    "        if re.fullmatch(r'[0-3]', vm):\n"
    "            return api.Std(int(vm))\n"
    "        return {int(i): api.Std(int(v)) for i, v in (m.split(':') for m in vm.split(','))}\n"
    "    api.Std.from_str = staticmethod(from_str)\n"
    "    if '--node_rank' not in sys.argv[:-1] or sys.argv[sys.argv.index('--node_rank') + 1] == "
    "'0':\n"
    "        print('clusterdoc: this torchrun cannot parse its own --redirects default on '\n"
    "              'this Python (torch < 2.0 on Python >= 3.11); patched for this run',\n"
    "              file=sys.stderr)\n"
    "from torch.distributed.run import main\n"
    "sys.argv[0] = 'torchrun'\n"
    "main()\n";

/* torch's "major.minor" as major*100 + minor (0 when unreadable). */
static int torch_release(const char *version)
{
	int major = 0, minor = 0;

	if (!version || sscanf(version, "%d.%d", &major, &minor) != 2)
		return 0;
	return major * 100 + minor;
}

/* "Name: ..." or "Name" where Name is a dotted Python identifier ending in
 * Error, Exception or Interrupt: an exception's last traceback line. */
static int is_exception_line(const char *s)
{
	const char *p = s, *name_end;

	while (*p && (isalnum((unsigned char)*p) || *p == '_' || *p == '.'))
		p++;
	name_end = p;
	if (name_end == s || (*p != ':' && *p != '\0'))
		return 0;
	for (const char *suffix[] = {"Error", "Exception", "Interrupt", NULL}, **x = suffix; *x;
	     x++) {
		size_t n = strlen(*x);

		if ((size_t)(name_end - s) >= n && strncmp(name_end - n, *x, n) == 0)
			return 1;
	}
	return 0;
}

int torchrun_is_error_line(const char *line)
{
	static const char *const signs[] = {
	    "NCCL WARN",
	    "Connection refused",
	    "No route to host",
	    "Connection reset",
	    "Connection closed by peer",
	    "timed out",
	    "clusterdoc-agent: cannot",
	    "Segmentation fault",
	    "Killed",
	};

	while (*line == ' ' || *line == '\t')
		line++;
	if (is_exception_line(line))
		return 1;
	for (size_t i = 0; i < CD_ARRAY_LEN(signs); i++) {
		if (strstr(line, signs[i]))
			return 1;
	}
	return 0;
}

void torchrun_arg(json_t *argv, const char *s)
{
	json_array_append_new(argv, json_string(s));
}

void torchrun_arg_int(json_t *argv, long long v)
{
	char s[32];

	snprintf(s, sizeof(s), "%lld", v);
	torchrun_arg(argv, s);
}

json_t *torchrun_argv(const char *python, const char *torch_version, int nnodes, int node_rank,
                      int nproc, const char *master_addr, int master_port)
{
	json_t *argv = json_array();
	char addr[NM_ADDR + 2];
	int release = torch_release(torch_version);

	torchrun_arg(argv, python ? python : "python3");
	/* torchrun arrived in 1.10; before it, launch with --use_env gives the
	 * same environment. The underscore spellings are accepted by both. */
	if (release && release < 110) {
		torchrun_arg(argv, "-m");
		torchrun_arg(argv, "torch.distributed.launch");
		torchrun_arg(argv, "--use_env");
	} else {
		torchrun_arg(argv, "-c");
		torchrun_arg(argv, torchrun_shim);
	}
	torchrun_arg(argv, "--nnodes");
	torchrun_arg_int(argv, nnodes);
	torchrun_arg(argv, "--node_rank");
	torchrun_arg_int(argv, node_rank);
	torchrun_arg(argv, "--nproc_per_node");
	torchrun_arg_int(argv, nproc);
	/* An IPv6 master address is written in brackets, as torchrun wants. */
	if (strchr(master_addr, ':'))
		snprintf(addr, sizeof(addr), "[%s]", master_addr);
	else
		snprintf(addr, sizeof(addr), "%s", master_addr);
	torchrun_arg(argv, "--master_addr");
	torchrun_arg(argv, addr);
	torchrun_arg(argv, "--master_port");
	torchrun_arg_int(argv, master_port);
	return argv;
}

const char *torchrun_missing(json_t *facts, const char *host, const char *python, char *why,
                             size_t len)
{
	json_t *torch = json_object_get(facts, "torch");
	json_t *errors = json_object_get(facts, "errors");
	const char *err = json_string_value(json_object_get(errors, "torch"));
	const char *found = json_string_value(json_object_get(
	    json_array_get(json_object_get(facts, "python_candidates"), 0), "path"));
	char hint[CD_ERRLEN] = "";

	/* the interpreter the agent found torch in, when the login one has none */
	if (found)
		snprintf(hint, sizeof(hint), " (torch is in %s: pass --python %s)", found, found);
	if (!json_is_object(json_object_get(facts, "python"))) {
		const char *perr = json_string_value(json_object_get(errors, "python"));

		if (python)
			snprintf(why, len, "%s: %s", host,
			         perr ? perr : "the --python interpreter did not answer");
		else
			snprintf(why, len, "%s: no python3 in PATH%s", host, hint);
		return why;
	}
	if (!json_is_object(torch)) {
		snprintf(why, len, "%s: import torch failed%s%s%s", host, err ? ": " : "",
		         err ? err : "", hint);
		return why;
	}
	return NULL;
}
