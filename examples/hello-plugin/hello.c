/* hello.c: a minimal out-of-tree hqt harness plugin.
 *
 * It serves one harness, "hello", that runs `bash --norc` in the project
 * directory, adds nothing when sandboxed, and reads its status from a prompt.
 * Build: make (uses `pkg-config --cflags hqt-plugin`), then copy hello.so
 * into a plugin directory (hqt --plugin-dir DIR plugins).
 */
#define _GNU_SOURCE /* memmem */
#include <hqt/plugin.h>

#include <string.h>

static const struct hqt_host_api *host;

static int
build_spawn(const struct hqt_ctx *ctx, const struct hqt_request *req, struct hqt_cmd *out,
	    struct hqt_error *err)
{
	(void)ctx;
	(void)err;
	host->argv_push(out, "bash");
	host->argv_push(out, "--norc");
	host->env_set(out, "PS1", "hello$ ");
	host->set_cwd(out, req->project_path);
	return HQT_OK;
}

static int
build_resume(const struct hqt_ctx *ctx, const struct hqt_request *req, struct hqt_cmd *out,
	     struct hqt_error *err)
{
	(void)ctx; (void)req; (void)out; (void)err;
	return HQT_FRESH; /* a shell has nothing to resume */
}

static enum hqt_status
parse_status(const struct hqt_ctx *ctx, const char *screen, size_t len)
{
	(void)ctx;
	return memmem(screen, len, "hello$ ", 7) != NULL ? HQT_STATUS_WAITING
							  : HQT_STATUS_UNKNOWN;
}

static const struct hqt_plugin hello = {
	.abi_major = HQT_PLUGIN_ABI_MAJOR,
	.abi_minor = HQT_PLUGIN_ABI_MINOR,
	.struct_size = sizeof(struct hqt_plugin),
	.name = "hello",
	.display_name = "Hello (example)",
	.build_spawn = build_spawn,
	.build_resume = build_resume,
	.parse_status = parse_status,
};

HQT_PLUGIN_EXPORT const struct hqt_plugin *
hqt_plugin_query(const struct hqt_host_api *h, struct hqt_error *err)
{
	(void)err;
	host = h;
	return &hello;
}
