/* plugin-host.h: loading harness plugins with dlopen, validating them, and the
 * registry of harnesses they serve. */
#ifndef HQT_PLUGIN_HOST_H
#define HQT_PLUGIN_HOST_H

#include <stdbool.h>

#include "hqt/plugin.h"
#include "config.h"
#include "sandbox.h" /* struct bind */
#include "strv.h"

/* The host-owned builders behind the opaque types of plugin.h. */
struct hqt_cmd {
	struct strv argv;
	struct strv env;  /* "NAME=VALUE" */
	char *cwd;        /* NULL: the project directory */
};

struct hqt_strlist {
	struct strv items;
};

struct hqt_binds {
	struct bind *v;
	size_t n;
};

struct hqt_error {
	char *msg;
};

void hqt_cmd_init(struct hqt_cmd *cmd);
void hqt_cmd_clear(struct hqt_cmd *cmd);
void binds_clear(struct hqt_binds *b);
void binds_add(struct hqt_binds *b, const char *path, unsigned flags);

/* A loaded plugin. */
struct plugin {
	char *file;                       /* absolute path of the .so */
	void *dl;                         /* dlopen handle */
	const struct hqt_plugin *desc;    /* the host's copy: min(struct_size, sizeof) of the
					   * plugin's, the rest zero; owned */
	char abi[16];                     /* "1.0", from the descriptor */
};

/* A plugin that was refused, and why. */
struct refusal {
	char *file;
	char *reason;
};

/* A harness: a plugin serving one name with one INI section. */
struct harness {
	char *name;
	const struct plugin *plugin;
	const struct config_section *section; /* may be NULL */
	struct hqt_ctx ctx;                   /* handed to every plugin call */
};

struct registry {
	struct plugin *plugins;
	size_t nplugins;
	struct refusal *refused;
	size_t nrefused;
	struct harness *harnesses;
	size_t nharnesses;
	char *home;                           /* owned; ctx.home points here */
	struct strv warnings;                 /* e.g. a generic section without command */
	bool partial;                         /* only what some harnesses need
					       * (registry_load_for) */
};

/* The host function table every plugin gets. */
extern const struct hqt_host_api hqt_host_api;

/*
 * Load the plugins that cfg->plugins_load names from cfg->plugin_dir, then
 * build the harness registry from them and cfg's [harness.NAME] sections.
 * Never fails: each bad plugin is recorded in reg->refused with its reason.
 * Returns -1 with *err only when the plugin directory itself is unusable
 * (reg is still valid and empty of plugins).
 */
int registry_load(struct registry *reg, const struct config *cfg, char **err);
void registry_free(struct registry *reg);
/*
 * Load only what the harnesses `names` need: the plugin of each, found by
 * its file name (PLUGIN.so, PLUGIN being the harness's `plugin` key or else
 * its name), when [plugins] load allows it; reg->partial is set.  A command
 * that starts one session or reads the status of a few needs one or two
 * plugins, not every one.  1 when that cannot serve every name (a plugin
 * refused, a file named otherwise than its plugin, a harness unknown): reg
 * is then freed and the caller loads everything (registry_load), which
 * also gives the full picture and its messages.  -1 as registry_load.
 * Only `hqt plugins`, `hqt doctor` and the TUI, which load everything, see
 * a duplicate plugin name declared by a file named for another.
 */
int registry_load_for(struct registry *reg, const struct config *cfg, char *const names[],
		      size_t n, char **err);

const struct harness *registry_harness(const struct registry *reg, const char *name);

/* Thin wrappers that call the plugin and turn its hqt_error into *err. */
int harness_build_spawn(const struct harness *h, const struct hqt_request *req,
			struct hqt_cmd *out, char **err);
/* 0 built, 1 spawn fresh instead, -1 error. */
int harness_build_resume(const struct harness *h, const struct hqt_request *req,
			 struct hqt_cmd *out, char **err);
/* 0 with *id malloc'd, 1 the harness picks its own (*id NULL), -1 error. */
int harness_generate_id(const struct harness *h, char **id, char **err);
/* 1 found (*id malloc'd), 0 not yet, -1 error. */
int harness_capture_id(const struct harness *h, const struct hqt_request *req,
		       char **id, char **err);
/* Does the harness read its status from the screen (parse_status)? */
bool harness_reads_screen(const struct harness *h);
enum hqt_status harness_parse_status(const struct harness *h, const char *screen,
				     size_t len);
/*
 * One line of a session's event file (ABI 1.3 parse_event), hostile input:
 * handed to the plugin (which parses it strictly) only when it is at most
 * HARNESS_EVENT_MAX bytes of "{...}" in valid UTF-8 without control bytes.  The status it
 * says (HQT_STATUS_UNKNOWN: nothing, or no parse_event), and in id (when
 * non-NULL; 37 bytes) the harness session id it names, only when that is
 * UUID-like (8-4-4-4-12 hex digits), else "".  *at_ms (when non-NULL):
 * hqt-event's date, when the line starts {"hqt_at":<digits>, else 0.
 */
#define HARNESS_EVENT_MAX 16384
bool harness_has_events(const struct harness *h);
enum hqt_status harness_parse_event(const struct harness *h, const char *line, size_t len,
				    char id[37], long long *at_ms);
/* 8-4-4-4-12 hex digits, nothing else. */
bool uuid_like(const char *s);
void harness_skip_flags(const struct harness *h, struct strv *out);
void harness_binds(const struct harness *h, struct hqt_binds *out);
/* The harness's own hosts for net = allow (ABI 1.5), normalised onto out
 * (config_net_entry); entries it does not take onto refused. */
void harness_net_allow(const struct harness *h, struct strv *out, struct strv *refused);

#endif
