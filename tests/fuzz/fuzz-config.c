/* fuzz-config.c: config_parse_string on arbitrary bytes; it must never crash,
 * leak or hand back a config that breaks the promises of config.h. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                              \
	do {                                                                     \
		if (!(cond)) {                                                   \
			fprintf(stderr, "fuzz-config: %s:%d: broken: %s\n", __FILE__, \
				__LINE__, #cond);                                \
			abort();                                                 \
		}                                                                \
	} while (0)

static const char name[] = "/fuzz/hqt.ini";

static void
check_ok(const struct config *cfg)
{
	CHECK(cfg->plugin_dir != NULL && cfg->db_path != NULL);
	CHECK(cfg->tmux_socket != NULL && cfg->tmux_session != NULL);
	CHECK(*cfg->tmux_session != '\0' && strpbrk(cfg->tmux_session, ":. \t\n") == NULL &&
	      cfg->tmux_session[0] != '-');
	CHECK(strpbrk(cfg->tmux_socket, ":./ \t\n") == NULL);
	CHECK(strv_find(&cfg->plugins_load, "*") < 0 || cfg->plugins_load.n == 1);
	for (size_t i = 0; i < cfg->plugins_load.n; i++)
		CHECK(strcmp(cfg->plugins_load.v[i], "*") == 0 || valid_name(cfg->plugins_load.v[i]));
	for (size_t i = 0; i < cfg->sandbox.ro_binds.n; i++)
		CHECK(cfg->sandbox.ro_binds.v[i][0] == '/');
	for (size_t i = 0; i < cfg->sandbox.rw_binds.n; i++)
		CHECK(cfg->sandbox.rw_binds.v[i][0] == '/');
	for (size_t i = 0; i < cfg->nsections; i++) {
		const struct config_section *sec = &cfg->sections[i];
		CHECK(valid_name(sec->name));
		CHECK(sec->plugin == NULL || valid_name(sec->plugin));
		CHECK(sec->keys.n == sec->values.n && sec->keys.n == sec->lines.n);
		CHECK(sec->where != NULL && strncmp(sec->where, name, strlen(name)) == 0);
		CHECK(config_section(cfg, sec->name) == sec);
		for (size_t k = 0; k < sec->keys.n; k++) {
			CHECK(strcmp(sec->keys.v[k], "plugin") != 0);
			CHECK(config_section_get(sec, sec->keys.v[k]) == sec->values.v[k]);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config cfg, zero;
	struct strv warnings = STRV_INIT;
	char *text = xmalloc(size + 1), *err = NULL;
	int rc;

	memcpy(text, data, size);
	text[size] = '\0';
	memset(&zero, 0, sizeof zero);
	rc = config_parse_string(&cfg, text, name, &warnings, &err);
	if (rc == 0) {
		CHECK(err == NULL);
		check_ok(&cfg);
	} else {
		CHECK(rc == -1 && err != NULL && strchr(err, '\n') == NULL);
		CHECK(strncmp(err, name, strlen(name)) == 0);
		CHECK(memcmp(&cfg, &zero, sizeof cfg) == 0); /* left empty */
	}
	for (size_t i = 0; i < warnings.n; i++)
		CHECK(strchr(warnings.v[i], '\n') == NULL &&
		      strncmp(warnings.v[i], name, strlen(name)) == 0);
	config_free(&cfg);
	config_free(&cfg); /* twice: free leaves it empty */
	strv_clear(&warnings);
	free(err);
	free(text);
	return 0;
}
