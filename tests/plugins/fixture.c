/* fixture.c: one source for every bad-plugin fixture; each DEFECT_* macro
 * builds a .so with exactly one thing wrong with it. */
#include <hqt/plugin.h>

#include <stddef.h>
#include <stdint.h>

#ifdef DEFECT_UNDEFINED_SYMBOL
/* Resolved at dlopen(RTLD_NOW) time and missing everywhere: dlopen fails. */
extern int hqt_fixture_no_such_function(void);
int hqt_fixture_use(void);
HQT_PLUGIN_EXPORT int hqt_fixture_use(void) { return hqt_fixture_no_such_function(); }
#endif

static int __attribute__((unused))
spawn(const struct hqt_ctx *ctx, const struct hqt_request *req, struct hqt_cmd *out,
      struct hqt_error *err)
{
	(void)err;
	ctx->host->argv_push(out, "true");
	ctx->host->set_cwd(out, req->project_path);
	return HQT_OK;
}

#ifndef FIXTURE_NAME
#define FIXTURE_NAME "fixture"
#endif

#if defined(DEFECT_SMALL)
/* An old or broken plugin whose descriptor stops before build_spawn. */
struct small_desc {
	uint32_t abi_major, abi_minor;
	size_t struct_size;
	const char *name, *display_name;
};
static const struct small_desc desc = {
	HQT_PLUGIN_ABI_MAJOR, HQT_PLUGIN_ABI_MINOR, sizeof(struct small_desc),
	FIXTURE_NAME, "Small",
};
#else
static const struct hqt_plugin desc = {
#if defined(DEFECT_MAJOR)
	.abi_major = HQT_PLUGIN_ABI_MAJOR + 1,
#else
	.abi_major = HQT_PLUGIN_ABI_MAJOR,
#endif
#if defined(DEFECT_MINOR)
	.abi_minor = HQT_PLUGIN_ABI_MINOR + 1,
#else
	.abi_minor = HQT_PLUGIN_ABI_MINOR,
#endif
#if defined(DEFECT_SHORT)
	.struct_size = offsetof(struct hqt_plugin, generate_session_id),
#else
	.struct_size = sizeof(struct hqt_plugin),
#endif
#if defined(DEFECT_EMPTY_NAME)
	.name = "",
#else
	.name = FIXTURE_NAME,
#endif
	.display_name = "Fixture",
#if !defined(DEFECT_NO_SPAWN)
	.build_spawn = spawn,
#endif
	.build_resume = spawn,
#if defined(DEFECT_SHORT)
	/* A descriptor that says it ends right after build_resume (an older
	 * plugin, or a lie), with junk where the later fields would be: the
	 * host must never read, let alone call, them. */
	.generate_session_id = (int (*)(const struct hqt_ctx *, char *, size_t,
					struct hqt_error *))(uintptr_t)1,
	.capture_session_id = (int (*)(const struct hqt_ctx *, const struct hqt_request *,
				       char *, size_t, struct hqt_error *))(uintptr_t)1,
	.parse_status = (enum hqt_status (*)(const struct hqt_ctx *, const char *,
					     size_t))(uintptr_t)1,
#endif
};
#endif

#ifndef DEFECT_NO_ENTRY
HQT_PLUGIN_EXPORT const struct hqt_plugin *
hqt_plugin_query(const struct hqt_host_api *host, struct hqt_error *err)
{
#ifdef DEFECT_NULL
	(void)desc;
	host->set_error(err, "this fixture always refuses");
	return NULL;
#else
	(void)host;
	(void)err;
	return (const struct hqt_plugin *)&desc;
#endif
}
#else
/* Exports something, just not the entry point. */
HQT_PLUGIN_EXPORT const void *hqt_plugin_query_misspelt(void);
HQT_PLUGIN_EXPORT const void *hqt_plugin_query_misspelt(void) { return &desc; }
#endif
