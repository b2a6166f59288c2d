/* SPDX-License-Identifier: MIT */
/*
 * verbs_lib.c - libibverbs through dlopen, checked in a child first (see
 * verbs_lib.h).
 */
#include "probes/verbs_lib.h"
#include "probes/rdma_probe.h"
#include "cd.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

char *verbs_lib_path(const char *root)
{
	json_t *errors = json_object();
	json_t *node = rdma_probe_node(root, NULL, errors);
	const char *lib = json_string_value(json_object_get(node, "verbs_lib"));
	char *path = lib ? cd_asprintf("%s%s", root, lib) : NULL;

	json_decref(node);
	json_decref(errors);
	return path;
}

/* The calls, in struct verbs_lib's order after the handle. */
static const char *const symbols[] = {
    "ibv_get_device_list", "ibv_free_device_list", "ibv_get_device_name", "ibv_open_device",
    "ibv_close_device",    "ibv_query_port",       "ibv_query_gid",       "ibv_alloc_pd",
    "ibv_dealloc_pd",      "ibv_reg_mr",           "ibv_dereg_mr",        "ibv_create_cq",
    "ibv_destroy_cq",      "ibv_create_qp",        "ibv_modify_qp",       "ibv_destroy_qp",
};

static void **slot(struct verbs_lib *v, size_t i)
{
	void **slots[] = {
	    (void **)&v->get_device_list, (void **)&v->free_device_list,
	    (void **)&v->get_device_name, (void **)&v->open_device,
	    (void **)&v->close_device,    (void **)&v->query_port,
	    (void **)&v->query_gid,       (void **)&v->alloc_pd,
	    (void **)&v->dealloc_pd,      (void **)&v->reg_mr,
	    (void **)&v->dereg_mr,        (void **)&v->create_cq,
	    (void **)&v->destroy_cq,      (void **)&v->create_qp,
	    (void **)&v->modify_qp,       (void **)&v->destroy_qp,
	};
	return slots[i];
}

static int load(struct verbs_lib *v, const char *path, char *why, size_t len)
{
	memset(v, 0, sizeof(*v));
	if (!path) {
		snprintf(why, len, "no libibverbs");
		return -1;
	}
	v->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!v->handle) {
		const char *e = dlerror();

		snprintf(why, len, "libibverbs does not load: %s", e ? e : "?");
		return -1;
	}
	for (size_t i = 0; i < CD_ARRAY_LEN(symbols); i++) {
		void *sym = dlsym(v->handle, symbols[i]);

		if (!sym) {
			snprintf(why, len, "libibverbs lacks %s", symbols[i]);
			verbs_lib_close(v);
			return -1;
		}
		memcpy(slot(v, i), &sym, sizeof(sym));
	}
	{
		void *sym = dlsym(v->handle, "ibv_wc_status_str");

		memcpy(&v->wc_status_str, &sym, sizeof(sym));
	}
	return 0;
}

void verbs_lib_close(struct verbs_lib *v)
{
	if (v->handle)
		dlclose(v->handle);
	memset(v, 0, sizeof(*v));
}

struct cd_ibv_context *verbs_lib_open_device(const struct verbs_lib *v, const char *name, char *why,
                                             size_t len)
{
	int n = 0;
	struct cd_ibv_device **list = v->get_device_list(&n);
	struct cd_ibv_context *ctx = NULL;

	if (!list || n <= 0) {
		snprintf(why, len, "no RDMA device");
		goto out;
	}
	for (int i = 0; i < n && list[i]; i++) {
		const char *dev = v->get_device_name(list[i]);

		if (!dev || strcmp(dev, name) != 0)
			continue;
		errno = 0;
		ctx = v->open_device(list[i]);
		if (!ctx)
			snprintf(why, len, "%s does not open: %s", name,
			         errno ? strerror(errno) : "no reason given");
		goto out;
	}
	snprintf(why, len, "no device %s", name);
out:
	if (list)
		v->free_device_list(list);
	return ctx;
}

/* The child: load, open, close; the answer on fd ("" when it opens). */
_Noreturn static void try_in_child(int fd, const char *path, const char *device)
{
	struct verbs_lib v;
	struct cd_ibv_context *ctx;
	char why[256] = "";

	if (load(&v, path, why, sizeof(why)) == 0) {
		ctx = verbs_lib_open_device(&v, device, why, sizeof(why));
		if (ctx)
			v.close_device(ctx);
	}
	if (write(fd, why, strlen(why) + 1) < 0)
		_exit(2);
	_exit(0);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads the child's answer until it closes or the deadline; 1 when the
 * answer is complete (ends in NUL), 0 at the deadline. */
static int read_answer(int fd, char *buf, size_t len, int64_t deadline)
{
	size_t got = 0;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int64_t left = deadline - now_ms();
		ssize_t n;

		if (left <= 0)
			return 0;
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (buf[got - 1] == '\0' || got == len - 1)
			break;
	}
	buf[got] = '\0';
	return 1;
}

/* Opens device in a child under VERBS_OPEN_WAIT_MS: 0 when it opened, -1
 * with why. */
static int check_in_child(const char *path, const char *device, char *why, size_t len)
{
	int fds[2], status = 0, done;
	char answer[256] = "";
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		snprintf(why, len, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		try_in_child(fds[1], path, device);
	}
	close(fds[1]);
	done = read_answer(fds[0], answer, sizeof(answer), now_ms() + VERBS_OPEN_WAIT_MS);
	close(fds[0]);
	if (!done)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!done) {
		snprintf(why, len, "opening %s did not finish within %d ms", device,
		         VERBS_OPEN_WAIT_MS);
		return -1;
	}
	if (WIFSIGNALED(status)) {
		snprintf(why, len, "the verbs provider crashed opening %s (signal %d)", device,
		         WTERMSIG(status));
		return -1;
	}
	if (answer[0] || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(why, len, "%s", answer[0] ? answer : "the verbs check ended early");
		return -1;
	}
	return 0;
}

/* The last library and device the child opened: once a provider has
 * opened a device, it is trusted in this process (the listener's side and
 * then the connector's open the same one; a fork after memory is
 * registered is what verbs programs avoid). Under checked_lock: the
 * listener and the connector may open at once. */
static pthread_mutex_t checked_lock = PTHREAD_MUTEX_INITIALIZER;
static char checked[1024];

int verbs_lib_open(struct verbs_lib *v, const char *path, const char *device, char *why, size_t len)
{
	char key[sizeof(checked)];
	int known;

	memset(v, 0, sizeof(*v));
	if (!path) {
		snprintf(why, len, "no libibverbs");
		return -1;
	}
	snprintf(key, sizeof(key), "%s\n%s", path, device);
	pthread_mutex_lock(&checked_lock);
	known = strcmp(checked, key) == 0;
	pthread_mutex_unlock(&checked_lock);
	if (!known && check_in_child(path, device, why, len) < 0)
		return -1;
	pthread_mutex_lock(&checked_lock);
	snprintf(checked, sizeof(checked), "%s", key);
	pthread_mutex_unlock(&checked_lock);
	return load(v, path, why, len);
}
