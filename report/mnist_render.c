/* SPDX-License-Identifier: MIT */
/* mnist_render.c - the text and JSON renderings of an MNIST job (see mnist_render.h). */
#include "mnist_render.h"
#include "jsondoc.h"
#include "termtext.h"
#include "report/rdzv_render.h"

#include "cd.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Node indexes with an error, the earliest first error line first (later
 * errors are usually consequences of the first), then the rest. */
static size_t errors_in_order(const struct mnist_report *rep, size_t *order)
{
	size_t n = 0;

	for (size_t i = 0; i < rep->nnodes; i++) {
		if (rep->nodes[i].error[0] || rep->nodes[i].first_error[0])
			order[n++] = i;
	}
	for (size_t a = 1; a < n; a++) {
		for (size_t b = a; b > 0; b--) {
			const struct mnist_node *x = &rep->nodes[order[b - 1]],
			                        *y = &rep->nodes[order[b]];
			int64_t tx = x->first_error_ms ? x->first_error_ms : INT64_MAX;
			int64_t ty = y->first_error_ms ? y->first_error_ms : INT64_MAX;

			if (tx <= ty)
				break;
			size_t t = order[b - 1];
			order[b - 1] = order[b];
			order[b] = t;
		}
	}
	return n;
}

static void print_clock(int64_t wall_ms, char *out, size_t len)
{
	time_t s = (time_t)(wall_ms / 1000);
	struct tm tm;

	localtime_r(&s, &tm);
	snprintf(out, len, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec,
	         (int)(wall_ms % 1000));
}

void mnist_print_text(const struct mnist_report *rep)
{
	size_t *order = cd_calloc(rep->nnodes ? rep->nnodes : 1, sizeof(*order)), n;

	termtext_printf(stdout, "# clusterdoc mnist: %s mode (%s), %d rank(s) on %zu node(s)\n",
	                mnist_mode_name(rep->mode), rep->backend[0] ? rep->backend : "-",
	                rep->nranks, rep->nnodes);
	if (rep->mode_note[0])
		termtext_printf(stdout, "# %s\n", rep->mode_note);
	for (size_t i = 0; i < rep->nnodes; i++) {
		const struct mnist_node *nd = &rep->nodes[i];

		if (nd->addr[0])
			termtext_printf(stdout, "#  %-16s %-10s %-20s ranks %d-%d%s%s\n", nd->host,
			                nd->ifname, nd->addr, nd->first_rank,
			                nd->first_rank + nd->nranks - 1,
			                nd->torch_version[0] ? "  torch " : "", nd->torch_version);
	}
	for (int e = 0; e < rep->epochs_done; e++)
		termtext_printf(stdout, "epoch %d: loss %.4f (%.1f s)\n", e + 1, rep->loss[e],
		                rep->epoch_seconds[e]);
	if (rep->have_accuracy)
		termtext_printf(stdout, "test accuracy: %.2f%% (%lld/%lld)\n",
		                rep->test_accuracy * 100, rep->test_correct, rep->test_total);
	if (rep->mode == MNIST_EMBEDDED && rep->param_sha256[0])
		termtext_printf(stdout, "parameters: %s on all %d ranks (sha256 %s)\n",
		                rep->hashes_identical ? "identical" : "DIFFERENT", rep->nranks,
		                rep->param_sha256);
	termtext_printf(stdout, "time: data %.1f s, push %.1f s, training %.1f s, total %.1f s\n",
	                rep->data_ms / 1e3, rep->push_ms / 1e3, rep->train_ms / 1e3,
	                rep->elapsed_ms / 1e3);
	if (rep->mode == MNIST_TORCH)
		rdzv_print_text(stdout, rep->rendezvous);
	if (rep->failed) {
		termtext_printf(stdout, "FAILED: %s\n", rep->failure);
		n = errors_in_order(rep, order);
		if (n)
			termtext_printf(stdout,
			                "errors by node, earliest first (later ones are usually "
			                "consequences):\n");
		for (size_t k = 0; k < n; k++) {
			const struct mnist_node *nd = &rep->nodes[order[k]];
			char clock[32];

			if (nd->first_error[0]) {
				print_clock(nd->first_error_ms, clock, sizeof(clock));
				termtext_printf(stdout, "  %s at %s: %s\n", nd->host, clock,
				                nd->first_error);
			}
			if (nd->error[0] && strcmp(nd->error, nd->first_error) != 0)
				termtext_printf(stdout, "  %s: %s\n", nd->host, nd->error);
		}
	}
	free(order);
}

json_t *mnist_report_json(const struct mnist_report *rep)
{
	json_t *nodes = json_array(), *epochs = json_array(), *o;

	for (size_t i = 0; i < rep->nnodes; i++) {
		const struct mnist_node *nd = &rep->nodes[i];
		json_t *n = json_pack(
		    "{sssssssisisssisIsbsb}", "host", nd->host, "ifname", nd->ifname, "address",
		    nd->addr, "first_rank", nd->first_rank, "nranks", nd->nranks, "torch_version",
		    nd->torch_version, "pushed_files", nd->pushed_files, "pushed_bytes",
		    (json_int_t)nd->pushed_bytes, "started", nd->started, "ended", nd->ended);

		json_object_set_new(n, "exit_code",
		                    nd->ended ? json_integer(nd->exit_code) : json_null());
		json_object_set_new(n, "signal",
		                    nd->signal ? json_integer(nd->signal) : json_null());
		json_object_set_new(n, "error_code",
		                    nd->error_code[0] ? json_string(nd->error_code) : json_null());
		json_object_set_new(n, "error",
		                    nd->error[0] ? json_string(nd->error) : json_null());
		json_object_set_new(n, "first_error",
		                    nd->first_error[0] ? json_string(nd->first_error)
		                                       : json_null());
		json_object_set_new(n, "first_error_wall_ms",
		                    nd->first_error_ms ? json_integer(nd->first_error_ms)
		                                       : json_null());
		json_object_set_new(n, "param_sha256",
		                    nd->param_sha256[0] ? json_string(nd->param_sha256)
		                                        : json_null());
		json_array_append_new(nodes, n);
	}
	for (int e = 0; e < rep->epochs_done; e++)
		json_array_append_new(epochs,
		                      json_pack("{sisfsf}", "epoch", e + 1, "loss", rep->loss[e],
		                                "seconds", rep->epoch_seconds[e]));
	o = json_pack("{sisssssssiso so}", "version", 1, "mode", mnist_mode_name(rep->mode),
	              "mode_note", rep->mode_note, "backend", rep->backend, "nranks", rep->nranks,
	              "nodes", nodes, "epochs", epochs);
	json_object_set_new(o, "test",
	                    rep->have_accuracy
	                        ? json_pack("{sfsIsI}", "accuracy", rep->test_accuracy, "correct",
	                                    (json_int_t)rep->test_correct, "total",
	                                    (json_int_t)rep->test_total)
	                        : json_null());
	if (rep->mode == MNIST_EMBEDDED) {
		json_object_set_new(o, "params_identical", json_boolean(rep->hashes_identical));
		json_object_set_new(o, "param_sha256",
		                    rep->param_sha256[0] ? json_string(rep->param_sha256)
		                                         : json_null());
	}
	json_object_set_new(o, "failed", json_boolean(rep->failed));
	json_object_set_new(o, "failure", rep->failed ? json_string(rep->failure) : json_null());
	json_object_set_new(o, "rendezvous",
	                    rep->mode == MNIST_TORCH ? rdzv_report_json(rep->rendezvous)
	                                             : json_null());
	json_object_set_new(o, "timing_ms",
	                    json_pack("{sIsIsIsI}", "data", (json_int_t)rep->data_ms, "push",
	                              (json_int_t)rep->push_ms, "train", (json_int_t)rep->train_ms,
	                              "total", (json_int_t)rep->elapsed_ms));
	return o;
}

void mnist_print_json(const struct mnist_report *rep)
{
	json_t *j = mnist_report_json(rep);

	jsondoc_dumpf(j, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(j);
}
