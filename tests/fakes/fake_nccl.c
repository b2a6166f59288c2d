/* SPDX-License-Identifier: MIT */
/*
 * fake_nccl.c - NCCL for the unit tests, loaded by the NCCL backend through
 * CLUSTERDOC_NCCL_LIB: only the functions it calls (collectives/nccl_dl.h),
 * with the real signatures and result codes (nccl.h), for a world of one
 * rank on the host: ncclAllReduce copies its input to its output.
 *
 * It behaves as a non-blocking NCCL does where the backend must cope:
 * ncclCommInitRankConfig with blocking = 0 and ncclCommFinalize answer
 * ncclInProgress and the state turns ncclSuccess at the next
 * ncclCommGetAsyncError; so does a communicator's first ncclAllReduce
 * (NCCL connecting lazily). A communicator of more than one rank never
 * completes its init (no peer ever comes). The ncclConfig_t is checked as
 * NCCL checks it (magic, version, blocking).
 *
 * Environment, read at every call:
 *   FAKE_NCCL_CORRUPT=1  ncclAllReduce flips the lowest bit of the first
 *                        element of its output: one wrong element
 *
 * Its log, as NCCL's (src/debug.cc, ncclDebugInit and ncclDebugLog):
 * NCCL_DEBUG, NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE are read once, at the
 * first line logged; with NCCL_DEBUG=INFO (or TRACE) the file (its %h, %p
 * and %% expanded; stdout without one) is opened with fopen "w",
 * unbuffered, and each INFO line of a subsystem in NCCL_DEBUG_SUBSYS
 * (default INIT,BOOTSTRAP,ENV; '^' excludes; ALL) is written as
 * "host:pid:tid [dev] NCCL INFO msg". The lines, with NCCL's format strings:
 *   ncclGetUniqueId (bootstrap.cc, bootstrapNetInit; INIT|BOOTSTRAP):
 *     "Bootstrap : Using eth0:10.0.0.1<0>"
 *   the process's first communicator (ncclIbInit, net_ib/init.cc, and
 *   ncclNetSocketInit, net_socket.cc; INIT|NET), from FAKE_NCCL_NET as it
 *   is then:
 *     "IB mlx5_0:1/RoCE mlx5_1:1/IB"  "NET/IB : Using%s %s; OOB %s:%s" with
 *                                    " [%d]%s:%d/%s" per device and "[RO]":
 *                                    "NET/IB : Using [0]mlx5_0:1/RoCE
 *                                    [1]mlx5_1:1/IB [RO]; OOB eth0:10.0.0.1<0>"
 *     "Socket eth0" (and unset)      "NET/IB : No device found." then
 *                                    "NET/Socket : Using [0]eth0:10.0.0.1<0>"
 *     "Socket eth0 noverbs"          the same with "Failed to open
 *                                    libibverbs.so[.1]" (ibvwrap.cc) instead
 *                                    of "No device found."
 *   with NCCL_IB_HCA set, as ncclIbInit filters the devices (matchIfList:
 *   '^' excludes, '=' exact names, else prefixes; "dev:port" items): the
 *   IB devices it leaves out are not used, and none left is "Socket eth0"
 *   every communicator (net.cc, ncclNetInit; INIT|NET): "Using network IB"
 *   or "Using network Socket".
 */
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int ncclResult_t;
typedef struct fake_comm *ncclComm_t;
typedef void *cudaStream_t;
typedef struct {
	char internal[128];
} ncclUniqueId;

/* ncclConfig_v21400, the fields every version has */
typedef struct {
	size_t size;
	unsigned int magic;
	unsigned int version;
	int blocking;
} fake_config;

enum {
	ncclSuccess = 0,
	ncclSystemError = 2,
	ncclInvalidArgument = 4,
	ncclInvalidUsage = 5,
	ncclInProgress = 7,
};

ncclResult_t ncclGetVersion(int *version);
ncclResult_t ncclGetUniqueId(ncclUniqueId *id);
ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                    fake_config *config);
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *state);
ncclResult_t ncclCommFinalize(ncclComm_t comm);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, int datatype, int op,
                           ncclComm_t comm, cudaStream_t stream);
const char *ncclGetErrorString(ncclResult_t result);
const char *ncclGetLastError(ncclComm_t comm);

struct fake_comm {
	int nranks, rank, blocking;
	ncclResult_t state;
	int polls; /* ncclCommGetAsyncError calls until state turns ncclSuccess; -1 never */
	int calls; /* ncclAllReduce calls */
};

static _Thread_local char last_error[256];

/* ------------------------------------------------ the log (src/debug.cc) */

enum { SUB_INIT = 1, SUB_NET = 2, SUB_BOOTSTRAP = 4, SUB_ENV = 8, SUB_ALL = 0xff };

static struct {
	pthread_mutex_t mu;
	int inited, info, mask, net_said;
	FILE *file;
	char host[256];
	char network[16]; /* "IB" or "Socket", from the first communicator */
} logst = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int subsys_mask(const char *v)
{
	static const struct {
		const char *name;
		int bit;
	} subs[] = {{"INIT", SUB_INIT},
	            {"NET", SUB_NET},
	            {"BOOTSTRAP", SUB_BOOTSTRAP},
	            {"ENV", SUB_ENV},
	            {"ALL", SUB_ALL}};
	char buf[256], *tok, *save;
	int mask = 0, invert = 0;

	if (!v)
		return SUB_INIT | SUB_BOOTSTRAP | SUB_ENV;
	if (*v == '^') {
		invert = 1;
		v++;
	}
	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (size_t k = 0; k < sizeof(subs) / sizeof(subs[0]); k++) {
			if (strcasecmp(tok, subs[k].name) == 0)
				mask |= subs[k].bit;
		}
	}
	return invert ? SUB_ALL & ~mask : mask;
}

/* NCCL_DEBUG_FILE with %h, %p and %% expanded. */
static void expand(const char *v, char *out, size_t len)
{
	size_t used = 0;

	for (; *v && used + 32 < len; v++) {
		if (*v != '%') {
			out[used++] = *v;
			continue;
		}
		v++;
		if (*v == 'h')
			used += (size_t)snprintf(out + used, len - used, "%s", logst.host);
		else if (*v == 'p')
			used += (size_t)snprintf(out + used, len - used, "%d", (int)getpid());
		else if (*v == '%')
			out[used++] = '%';
		else {
			out[used++] = '%';
			if (!*v)
				break;
			out[used++] = *v;
		}
	}
	out[used] = '\0';
}

/* ncclDebugInit: once, at the first line (logst.mu held). */
static void log_init(void)
{
	const char *level = getenv("NCCL_DEBUG"), *file = getenv("NCCL_DEBUG_FILE");
	char path[PATH_MAX];

	logst.inited = 1;
	if (gethostname(logst.host, sizeof(logst.host)) != 0)
		snprintf(logst.host, sizeof(logst.host), "unknown");
	logst.host[sizeof(logst.host) - 1] = '\0';
	logst.host[strcspn(logst.host, ".")] = '\0';
	logst.info = level && (strcasecmp(level, "INFO") == 0 || strcasecmp(level, "TRACE") == 0);
	logst.mask = subsys_mask(getenv("NCCL_DEBUG_SUBSYS"));
	logst.file = stdout;
	if (logst.info && file) {
		FILE *f;

		expand(file, path, sizeof(path));
		if ((f = fopen(path, "w"))) {
			setbuf(f, NULL);
			logst.file = f;
		}
	}
}

static void info(int subsys, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void info(int subsys, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	pthread_mutex_lock(&logst.mu);
	if (!logst.inited)
		log_init();
	if (logst.info && (logst.mask & subsys)) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		fprintf(logst.file, "%s:%d:%ld [0] NCCL INFO %s\n", logst.host, (int)getpid(),
		        (long)syscall(SYS_gettid), msg);
		fflush(logst.file);
	}
	pthread_mutex_unlock(&logst.mu);
}

/* " [0]mlx5_0:1/RoCE [1]mlx5_1:1/IB" from "mlx5_0:1/RoCE mlx5_1:1/IB". */
static void ib_devices(const char *spec, char *out, size_t len)
{
	char buf[512], *tok, *save;
	size_t used = 0;
	int k = 0;

	snprintf(buf, sizeof(buf), "%s", spec);
	out[0] = '\0';
	for (tok = strtok_r(buf, " ", &save); tok && used < len; tok = strtok_r(NULL, " ", &save))
		used += (size_t)snprintf(out + used, len - used, " [%d]%s", k++, tok);
}

/* Whether item ("mlx5_0", "mlx5:1") of NCCL_IB_HCA names dev:port. */
static int hca_item_matches(const char *item, size_t len, int exact, const char *dev, int port)
{
	const char *colon = memchr(item, ':', len);
	size_t nlen = colon ? (size_t)(colon - item) : len;

	if (colon && atoi(colon + 1) != port)
		return 0;
	if (exact)
		return strlen(dev) == nlen && strncmp(dev, item, nlen) == 0;
	return strncmp(dev, item, nlen) == 0;
}

/* Whether NCCL_IB_HCA (NULL: unset) lets ncclIbInit use dev:port. */
static int hca_allows(const char *hca, const char *dev, int port)
{
	int exclude = 0, exact = 0, found = 0;

	if (!hca || !*hca)
		return 1;
	if (*hca == '^')
		exclude = 1, hca++;
	if (*hca == '=')
		exact = 1, hca++;
	while (*hca && !found) {
		size_t len = strcspn(hca, ",");

		found = len && hca_item_matches(hca, len, exact, dev, port);
		hca += len + (hca[len] == ',');
	}
	return exclude ? !found : found;
}

/* The devices of spec ("mlx5_0:1/RoCE mlx5_1:1/IB") NCCL_IB_HCA allows, into
 * out (the same form). */
static void hca_filter(const char *spec, char *out, size_t len)
{
	char buf[512], *tok, *save, dev[64];
	size_t used = 0;

	snprintf(buf, sizeof(buf), "%s", spec);
	out[0] = '\0';
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		const char *colon = strchr(tok, ':');

		snprintf(dev, sizeof(dev), "%.*s", colon ? (int)(colon - tok) : (int)strlen(tok),
		         tok);
		if (hca_allows(getenv("NCCL_IB_HCA"), dev, colon ? atoi(colon + 1) : 1) &&
		    used < len)
			used +=
			    (size_t)snprintf(out + used, len - used, "%s%s", used ? " " : "", tok);
	}
}

/* The network lines of the process's first communicator, then the one of
 * every communicator. */
static void log_network(void)
{
	const char *spec = getenv("FAKE_NCCL_NET");
	int ib = spec && strncmp(spec, "IB ", 3) == 0, first;
	char devs[512], name[64], allowed[512] = "";

	if (ib) {
		hca_filter(spec + 3, allowed, sizeof(allowed));
		ib = allowed[0] != '\0';
	}

	pthread_mutex_lock(&logst.mu);
	first = !logst.net_said;
	logst.net_said = 1;
	if (first)
		snprintf(logst.network, sizeof(logst.network), "%s", ib ? "IB" : "Socket");
	pthread_mutex_unlock(&logst.mu);
	if (first && ib) {
		ib_devices(allowed, devs, sizeof(devs));
		info(SUB_INIT | SUB_NET, "NET/IB : Using%s [RO]; OOB eth0:10.0.0.1<0>", devs);
	} else if (first) {
		const char *ifname =
		    spec && strncmp(spec, "Socket ", 7) == 0 ? spec + 7 : "eth0"; /* or no device */

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(ifname, " "), ifname);
		if (strstr(ifname, " noverbs"))
			info(SUB_INIT, "Failed to open libibverbs.so[.1]");
		else
			info(SUB_INIT | SUB_NET, "NET/IB : No device found.");
		info(SUB_INIT | SUB_NET, "NET/Socket : Using [0]%s:10.0.0.1<0>", name);
	}
	info(SUB_INIT | SUB_NET, "Using network %s", logst.network);
}

static ncclResult_t fail(ncclResult_t r, const char *msg)
{
	snprintf(last_error, sizeof(last_error), "fake NCCL: %s", msg);
	return r;
}

/* Answer ncclInProgress now and turn ncclSuccess at the next poll. */
static ncclResult_t in_progress(struct fake_comm *c)
{
	c->state = ncclInProgress;
	c->polls = 1;
	return ncclInProgress;
}

ncclResult_t ncclGetVersion(int *version)
{
	*version = 22809;
	return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
	info(SUB_INIT | SUB_BOOTSTRAP, "Bootstrap : Using eth0:10.0.0.1<0>");
	/* every byte value, the high ones too, over the 128 bytes */
	for (int i = 0; i < 128; i++)
		id->internal[i] = (char)(i * 2 + (i >= 64));
	return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                    fake_config *config)
{
	fake_config cfg = {
	    .size = sizeof(cfg), .magic = 0xcafebeef, .version = 21400, .blocking = 1};
	struct fake_comm *c;

	(void)id;
	*comm = NULL;
	if (config) {
		if (config->magic != 0xcafebeef || config->size < sizeof(cfg))
			return fail(ncclInvalidArgument, "ncclConfig_t argument not initialized "
			                                 "via NCCL_CONFIG_INITIALIZER");
		if (config->version >= 21400 && config->blocking != INT_MIN)
			cfg.blocking = config->blocking;
	}
	if (cfg.blocking != 0 && cfg.blocking != 1)
		return fail(ncclInvalidArgument, "invalid config blocking attribute value");
	if (nranks < 1 || rank < 0 || rank >= nranks)
		return fail(ncclInvalidArgument, "invalid rank");
	if (nranks > 1 && cfg.blocking)
		return fail(ncclSystemError, "a blocking init of several ranks would never return");
	c = calloc(1, sizeof(*c));
	if (!c)
		return fail(ncclSystemError, "out of memory");
	*c = (struct fake_comm){.nranks = nranks, .rank = rank, .blocking = cfg.blocking};
	*comm = c;
	log_network();
	if (nranks > 1) {
		c->state = ncclInProgress;
		c->polls = -1;
		return ncclInProgress;
	}
	return cfg.blocking ? ncclSuccess : in_progress(c);
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
	return ncclCommInitRankConfig(comm, nranks, id, rank, NULL);
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *state)
{
	if (!comm)
		return fail(ncclInvalidArgument, "NULL communicator");
	if (comm->state == ncclInProgress && comm->polls > 0 && --comm->polls == 0)
		comm->state = ncclSuccess;
	*state = comm->state;
	return ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
	if (!comm || comm->state != ncclSuccess)
		return fail(ncclInvalidUsage, "finalize of a communicator that is not ready");
	return comm->blocking ? ncclSuccess : in_progress(comm);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	if (comm && comm->state != ncclSuccess)
		return fail(ncclInvalidUsage, "destroy of a communicator that is not ready");
	free(comm);
	return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm)
{
	free(comm);
	return ncclSuccess;
}

static size_t type_size(int datatype)
{
	static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};

	return datatype >= 0 && datatype < 12 ? sizes[datatype] : 0;
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, int datatype, int op,
                           ncclComm_t comm, cudaStream_t stream)
{
	const char *corrupt = getenv("FAKE_NCCL_CORRUPT");
	size_t size = type_size(datatype);

	if (!comm || comm->state != ncclSuccess)
		return fail(ncclInvalidUsage, "collective on a communicator that is not ready");
	if (!size || op != 0 || !send || !recv || !stream)
		return fail(ncclInvalidArgument, "bad ncclAllReduce argument");
	memmove(recv, send, count * size);
	if (count && corrupt && strcmp(corrupt, "1") == 0)
		((unsigned char *)recv)[0] ^= 1;
	if (comm->calls++ == 0 && !comm->blocking)
		return in_progress(comm);
	return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t result)
{
	switch (result) {
	case ncclSuccess:
		return "no error";
	case ncclSystemError:
		return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
	case ncclInvalidArgument:
		return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage:
		return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case ncclInProgress:
		return "NCCL operation in progress";
	}
	return "unknown result code";
}

const char *ncclGetLastError(ncclComm_t comm)
{
	(void)comm;
	return last_error;
}
