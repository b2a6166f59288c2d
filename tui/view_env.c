/* SPDX-License-Identifier: MIT */
/*
 * view_env.c - the Env view: the environment the check verified for each
 * node, as the export lines `clusterdoc env` prints (check_write_env),
 * then each node's torchrun line and the notes on what could not be
 * verified. `w` writes the export lines to a file, atomically.
 */
#include "ui.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/check_render.h"

/* ---------------------------------------------------------------- the lines */

/* What `clusterdoc env` prints for every node, in a malloc'd string (NULL
 * before the diagnosis); *status is check_write_env's. */
static char *env_lines(const struct tui *t, int *status)
{
	struct check_result r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!t->s.d || !t->s.m)
		return NULL;
	memset(&r, 0, sizeof(r));
	r.m = t->s.m;
	r.d = t->s.d;
	r.started_ms = t->s.check_started_ms;
	f = open_memstream(&buf, &len);
	if (!f)
		cd_fatal("out of memory");
	*status = check_write_env(f, &r, NULL);
	fclose(f);
	return buf;
}

static int node_visible(const struct tui *t, size_t i)
{
	const struct nm_node *n = &t->s.m->nodes[i];

	return ui_filter_match(t, n->host) || (n->hostname[0] && ui_filter_match(t, n->hostname));
}

/* The attribute of one export-file line: a node's heading, a line saying
 * what is missing, another comment, an export. */
static int line_attr(const struct tui *t, const char *line, int heading)
{
	if (heading)
		return ui_attr(t, UI_TITLE);
	if (strncmp(line, "# not checked", 13) == 0 || strncmp(line, "# some values", 13) == 0)
		return ui_attr(t, UI_WARN);
	if (line[0] == '#')
		return ui_attr(t, UI_DIM);
	return A_NORMAL;
}

/* The export lines of the nodes passing the filter. Each node's block
 * starts with "# HOST", the nodes in the model's order. */
static void add_export_lines(const struct tui *t, const char *buf, struct ui_text *x)
{
	const struct netmodel *m = t->s.m;
	size_t next = 0;
	int shown = 1;

	for (const char *p = buf; *p;) {
		size_t len = strcspn(p, "\n");
		int heading = 0;

		if (next < m->nnodes && p[0] == '#' && p[1] == ' ' &&
		    strlen(m->nodes[next].host) == len - 2 &&
		    strncmp(p + 2, m->nodes[next].host, len - 2) == 0) {
			shown = node_visible(t, next++);
			heading = 1;
		}
		if (shown)
			ui_text_add(x, line_attr(t, p, heading), 0, "%.*s", (int)len, p);
		p += len;
		if (*p == '\n')
			p++;
	}
}

/* A shell command broken at spaces into lines of at most w columns, each
 * but the last ending in a backslash, so that it still pastes into a shell. */
static void add_shell_wrapped(struct ui_text *x, int attr, int w, const char *cmd)
{
	int indent = 0, room;

	while (*cmd) {
		size_t len = strlen(cmd), cut = len;

		room = w - indent - 2 > 20 ? w - indent - 2 : 20;
		if ((int)len > w - indent) {
			cut = (size_t)room;
			while (cut > 0 && cmd[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = strcspn(cmd, " ");
		}
		ui_text_add(x, attr, indent, "%.*s%s", (int)cut, cmd, cmd[cut] ? " \\" : "");
		cmd += cut;
		while (*cmd == ' ')
			cmd++;
		indent = 4;
	}
}

static void add_torchrun(const struct tui *t, struct ui_text *x, int w)
{
	const struct netmodel *m = t->s.m;
	const struct suggestions *s = &t->s.d->sugg;

	ui_text_add(x, A_NORMAL, 0, " ");
	ui_text_add(x, ui_attr(t, UI_TITLE), 0, "torchrun");
	for (size_t i = 0; i < m->nnodes; i++) {
		if (!node_visible(t, i))
			continue;
		if (s->torchrun && s->torchrun[i]) {
			ui_text_add(x, ui_attr(t, UI_TITLE), 0, "# %s", m->nodes[i].host);
			add_shell_wrapped(x, A_NORMAL, w, s->torchrun[i]);
		} else {
			ui_text_add(x, ui_attr(t, UI_DIM), 0,
			            "# %s: none: not every value is verified", m->nodes[i].host);
		}
	}
	if (s->notes && *s->notes) {
		ui_text_add(x, A_NORMAL, 0, " ");
		ui_text_add(x, ui_attr(t, UI_TITLE), 0, "not shown, and why");
		ui_text_add(x, ui_attr(t, UI_WARN), 2, "%s", s->notes);
	}
}

/* ---------------------------------------------------------------- writing */

/* "~/x" is $HOME/x; anything else as given. free() it. */
static char *expand_home(const char *path)
{
	const char *home = getenv("HOME");

	if (path[0] == '~' && path[1] == '/' && home && *home)
		return cd_asprintf("%s%s", home, path + 1);
	return cd_strdup(path);
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* buf into path, mode 0644, through path.tmp and a rename so that a reader
 * never sees half a file. 0, or -1 with errno set. */
static int write_file_atomic(const char *path, const char *buf, size_t len)
{
	char *tmp = cd_asprintf("%s.tmp", path);
	int fd, rc = -1, saved;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto out;
	if (fchmod(fd, 0644) < 0 || write_all(fd, buf, len) < 0 || fsync(fd) < 0) {
		saved = errno;
		close(fd);
		unlink(tmp);
		errno = saved;
		goto out;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		saved = errno;
		unlink(tmp);
		errno = saved;
		goto out;
	}
	rc = 0;
out:
	free(tmp);
	return rc;
}

static void path_entered(struct tui *t, const char *text)
{
	char *buf, *path;
	size_t nlines = 0;
	int status = 0;

	if (!*text) {
		ui_message(t, 1, "no file given: nothing written");
		return;
	}
	buf = env_lines(t, &status);
	if (!buf) {
		ui_message(t, 1, "nothing to write: the check has not finished");
		return;
	}
	for (const char *p = buf; *p; p++)
		nlines += *p == '\n';
	path = expand_home(text);
	if (write_file_atomic(path, buf, strlen(buf)) < 0)
		ui_message(t, 1, "cannot write %s: %s", path, strerror(errno));
	else
		ui_message(t, 0, "wrote %zu lines to %s%s", nlines, path,
		           status ? " (some values could not be verified)" : "");
	free(path);
	free(buf);
}

/* ---------------------------------------------------------------- view */

static void draw(struct tui *t, struct view_state *vs, int y, int h, int w)
{
	struct ui_text x = {0};
	int status = 0, x0;
	char *buf = env_lines(t, &status);

	if (!buf) {
		ui_draw_check_waiting(t, y, w, "the environment appears");
		return;
	}
	x0 = ui_print(y, 1, w - 1, ui_attr(t, UI_TITLE), "%s",
	              "Verified environment (clusterdoc env)");
	ui_print(y, 1 + x0 + 3, w - x0 - 4, ui_attr(t, UI_DIM), "%s", "w writes it to a file");
	add_export_lines(t, buf, &x);
	add_torchrun(t, &x, w - 1);
	ui_text_draw(&x, y + 1, h - 1, w, &vs->scroll);
	ui_text_free(&x);
	free(buf);
}

static int key(struct tui *t, struct view_state *vs, int ch)
{
	if (ch == 'w') {
		if (t->s.check_state != TASK_DONE || !t->s.d) {
			ui_message(t, 1,
			           "nothing to write yet: the environment comes from a finished "
			           "check (press r)");
			return 1;
		}
		ui_prompt(t, PROMPT_PATH, "Write env to: ", t->o->env_path, path_entered);
		return 1;
	}
	return ui_text_scroll_key(vs, ch);
}

const struct view view_env = {
    .name = "Env",
    .hint = "w write the export lines to a file; j/k scroll; r re-run the check",
    .rerun = RERUN_CHECK,
    .draw = draw,
    .key = key,
};
