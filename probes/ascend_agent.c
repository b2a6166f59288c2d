/* SPDX-License-Identifier: MIT */
/* ascend_agent.c - hccn_tool per device on the node (ascend_agent.h): every
 * call is a childrun on a private loop, so all devices' calls run at once
 * and each has its own deadline. */
#include "probes/ascend_agent.h"
#include "probes/facts_ascend.h"
#include "cd.h"
#include "childrun.h"
#include "loop.h"
#include "scan.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define OUT_MAX   (256u << 10)
#define ERR_MAX   4096
#define QUOTE_MAX 160

enum what { W_IP, W_LINK, W_HEALTH, W_TLS, W_LLDP, W_DETECT_SET, W_DETECT_HEALTH };

static const struct {
	const char *args[4]; /* after "-i N" */
	const char *text;    /* for the incomplete lines */
} calls[] = {
    [W_IP] = {{"-ip", "-g"}, "-ip -g"},
    [W_LINK] = {{"-link", "-g"}, "-link -g"},
    [W_HEALTH] = {{"-net_health", "-g"}, "-net_health -g"},
    [W_TLS] = {{"-tls", "-g"}, "-tls -g"},
    [W_LLDP] = {{"-lldp", "-g"}, "-lldp -g"},
    [W_DETECT_SET] = {{"-netdetect", "-s"}, "-netdetect -s address"},
    [W_DETECT_HEALTH] = {{"-net_health", "-g"}, "-net_health -g"},
};

struct run;

struct call {
	struct run *run;
	int dev;
	enum what what;
	json_t *into;  /* the device object, or the netdetect result (borrowed) */
	size_t target; /* netdetect: index into the targets */
};

struct run {
	struct loop *loop;
	char tool[PATH_MAX];
	int timeout_ms;
	int pending;
	json_t *targets; /* netdetect: the request's targets (borrowed) */
	json_t *results; /* netdetect: one object per target */
};

static void start_call(struct run *r, int dev, enum what w, json_t *into, size_t target);

static void incomplete(struct call *c, const char *why)
{
	char line[CD_ERRLEN + 96];

	snprintf(line, sizeof(line), "hccn_tool -i %d %s: %s", c->dev, calls[c->what].text, why);
	if (c->what == W_DETECT_SET || c->what == W_DETECT_HEALTH) {
		json_object_set_new(c->into, "health", json_null());
		json_object_set_new(c->into, "incomplete", json_string(line));
	} else {
		json_array_append_new(json_object_get(c->into, "incomplete"), json_string(line));
	}
}

/* Parse what one call printed into its device (or result); 0, or -1 when
 * the format is unknown. */
static int take(struct call *c, const char *out, size_t len)
{
	char a[16], m[16], v[64], sys[64];
	int sw, rc;

	switch (c->what) {
	case W_IP:
		rc = ascend_parse_ip(out, len, a, m);
		if (rc == CD_ERR_NOTFOUND)
			json_object_set_new(c->into, "ip", json_null());
		else if (rc == 0)
			json_object_set_new(c->into, "ip",
			                    json_pack("{s:s, s:s}", "address", a, "netmask", m));
		return rc == CD_ERR_PARSE ? -1 : 0;
	case W_LINK:
		if (ascend_parse_labelled(out, len, "link status", v, sizeof(v)) < 0 || !v[0])
			return -1;
		json_object_set_new(c->into, "link", json_string(v));
		return 0;
	case W_HEALTH:
	case W_DETECT_HEALTH:
		if (ascend_parse_labelled(out, len, "net health status", v, sizeof(v)) < 0 || !v[0])
			return -1;
		json_object_set_new(c->into, c->what == W_HEALTH ? "net_health" : "health",
		                    json_string(v));
		return 0;
	case W_TLS:
		if (ascend_parse_tls(out, len, &sw) < 0)
			return -1;
		json_object_set_new(c->into, "tls", json_integer(sw));
		return 0;
	case W_LLDP:
		if (ascend_parse_lldp(out, len, v, sizeof(v), sys, sizeof(sys)) < 0)
			return -1;
		json_object_set_new(c->into, "lldp",
		                    json_pack("{s:s, s:s}", "port", v, "system", sys));
		return 0;
	case W_DETECT_SET:
		return 0;
	}
	return -1;
}

static void call_done(const struct childrun_result *res, void *arg)
{
	struct call *c = arg;
	struct run *r = c->run;
	char words[QUOTE_MAX + 1], why[CD_ERRLEN + QUOTE_MAX];

	if (res->rc < 0) {
		incomplete(c, res->error);
	} else if (!WIFEXITED(res->status) || WEXITSTATUS(res->status) != 0) {
		ascend_quote(words, sizeof(words), res->err->len ? res->err : res->out);
		snprintf(why, sizeof(why), "exit status %d: \"%s\"",
		         WIFEXITED(res->status) ? WEXITSTATUS(res->status)
		                                : 128 + WTERMSIG(res->status),
		         words);
		incomplete(c, why);
	} else if (take(c, res->out->data, res->out->len) < 0) {
		ascend_quote(words, sizeof(words), res->out);
		snprintf(why, sizeof(why), "a format clusterdoc does not know: \"%s\"", words);
		incomplete(c, why);
	} else if (c->what == W_DETECT_SET) {
		start_call(r, c->dev, W_DETECT_HEALTH, c->into, c->target);
	}
	if (c->what == W_DETECT_HEALTH || (c->what == W_DETECT_SET && res->rc < 0) ||
	    (c->what == W_DETECT_SET && json_object_get(c->into, "incomplete"))) {
		/* this target is done: the device's next one */
		size_t n = json_array_size(r->targets);

		for (size_t t = c->target + 1; t < n; t++) {
			json_t *tg = json_array_get(r->targets, t);

			if (json_integer_value(json_object_get(tg, "device")) == c->dev) {
				start_call(r, c->dev, W_DETECT_SET, json_array_get(r->results, t),
				           t);
				break;
			}
		}
	}
	free(c);
	if (--r->pending == 0)
		loop_stop(r->loop);
}

static void start_call(struct run *r, int dev, enum what w, json_t *into, size_t target)
{
	struct call *c = calloc(1, sizeof(*c));
	char devtext[16], err[CD_ERRLEN];
	const char *argv[8];
	size_t k = 0;

	if (!c)
		cd_fatal("out of memory");
	*c = (struct call){.run = r, .dev = dev, .what = w, .into = into, .target = target};
	snprintf(devtext, sizeof(devtext), "%d", dev);
	argv[k++] = r->tool;
	argv[k++] = "-i";
	argv[k++] = devtext;
	for (size_t a = 0; a < 4 && calls[w].args[a]; a++)
		argv[k++] = calls[w].args[a];
	if (w == W_DETECT_SET) {
		argv[k++] = "address";
		argv[k++] = json_string_value(
		    json_object_get(json_array_get(r->targets, target), "address"));
	}
	argv[k] = NULL;
	r->pending++;
	if (!childrun_start(r->loop, (char *const *)argv, r->timeout_ms, OUT_MAX, ERR_MAX,
	                    call_done, c, err, sizeof(err))) {
		incomplete(c, err);
		free(c);
		r->pending--;
	}
}

static int request_timeout(json_t *req)
{
	json_t *t = json_object_get(req, "timeout_ms");

	if (json_is_integer(t) && json_integer_value(t) > 0 && json_integer_value(t) <= 600000)
		return (int)json_integer_value(t);
	return ASCEND_CALL_MS;
}

/* Run the loop until every call is done; the deadlines bound it. */
static void run_all(struct run *r)
{
	if (r->pending)
		loop_run(r->loop);
	loop_free(r->loop);
}

json_t *ascend_agent_probe(json_t *req, const char **code, char *msg, size_t msglen)
{
	json_t *devs = json_object_get(req, "devices"), *out, *arr, *d;
	struct run r = {.timeout_ms = request_timeout(req)};
	int have = ascend_on_path("hccn_tool", r.tool, sizeof(r.tool));
	size_t i;

	if (!json_is_array(devs) || json_array_size(devs) > ASCEND_MAX_NPUS) {
		*code = "bad_request";
		snprintf(msg, msglen,
		         "ascend_probe: \"devices\" must be an array of at most %d ids",
		         ASCEND_MAX_NPUS);
		return NULL;
	}
	arr = json_array();
	json_array_foreach(devs, i, d)
	{
		json_t *dev;

		if (!json_is_integer(d) || json_integer_value(d) < 0 ||
		    json_integer_value(d) >= 4096) {
			json_decref(arr);
			*code = "bad_request";
			snprintf(msg, msglen, "ascend_probe: a device id is not a small integer");
			return NULL;
		}
		dev = json_pack("{s:I, s:n, s:n, s:n, s:n, s:n, s:[]}", "id", json_integer_value(d),
		                "ip", "link", "net_health", "tls", "lldp", "incomplete");
		json_array_append_new(arr, dev);
	}
	out = json_pack("{s:o}", "devices", arr);
	if (!have) {
		json_array_foreach(arr, i, d)
		{
			json_array_append_new(json_object_get(d, "incomplete"),
			                      json_string("hccn_tool is not on PATH"));
		}
		return out;
	}
	r.loop = loop_new();
	json_array_foreach(arr, i, d)
	{
		int id = (int)json_integer_value(json_object_get(d, "id"));

		for (enum what w = W_IP; w <= W_LLDP; w++)
			start_call(&r, id, w, d, 0);
	}
	run_all(&r);
	return out;
}

json_t *ascend_agent_netdetect(json_t *req, const char **code, char *msg, size_t msglen)
{
	json_t *targets = json_object_get(req, "targets"), *t;
	struct run r = {.timeout_ms = request_timeout(req), .targets = targets};
	int have = ascend_on_path("hccn_tool", r.tool, sizeof(r.tool));
	int started[ASCEND_MAX_NPUS] = {0};
	size_t i;

	if (!json_is_array(targets) || json_array_size(targets) > 64 * ASCEND_MAX_NPUS) {
		*code = "bad_request";
		snprintf(msg, msglen, "ascend_netdetect: \"targets\" must be an array");
		return NULL;
	}
	r.results = json_array();
	json_array_foreach(targets, i, t)
	{
		json_t *dv = json_object_get(t, "device"), *ad = json_object_get(t, "address");

		if (!json_is_integer(dv) || json_integer_value(dv) < 0 ||
		    json_integer_value(dv) >= ASCEND_MAX_NPUS || !json_is_string(ad) ||
		    strspn(json_string_value(ad), "0123456789.") != strlen(json_string_value(ad))) {
			json_decref(r.results);
			*code = "bad_request";
			snprintf(
			    msg, msglen,
			    "ascend_netdetect: a target needs a device id and an IPv4 address");
			return NULL;
		}
		json_array_append_new(
		    r.results, json_pack("{s:O, s:O, s:n}", "device", dv, "address", ad, "health"));
		if (!have)
			json_object_set_new(json_array_get(r.results, i), "incomplete",
			                    json_string("hccn_tool is not on PATH"));
	}
	if (have) {
		r.loop = loop_new();
		json_array_foreach(targets, i, t)
		{
			int dev = (int)json_integer_value(json_object_get(t, "device"));

			if (started[dev]++)
				continue; /* the device's first target starts its chain */
			start_call(&r, dev, W_DETECT_SET, json_array_get(r.results, i), i);
		}
		run_all(&r);
	}
	return json_pack("{s:o}", "results", r.results);
}
