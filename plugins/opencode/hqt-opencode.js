// hqt-opencode.js: hqt's bridge from opencode's event bus to hqt's helper
// (plugins/opencode/opencode.c loads it per launch through
// OPENCODE_CONFIG_CONTENT).  Each event that says something of the
// session's status becomes one flat JSON object on the stdin of
// $HQT_EVENT_COMMAND, run by argv (no shell), one at a time in order.  Only
// the session opened in this instance's directory counts, not sub-agents.
import { spawn } from "node:child_process";

export const HqtEvents = async (ctx) => {
  const cmd = process.env.HQT_EVENT_COMMAND;
  const dir = ctx && ctx.directory;
  const ours = new Set();
  let queue = Promise.resolve();

  const send = (line) => {
    queue = queue.then(
      () =>
        new Promise((done) => {
          let child;
          try {
            child = spawn(cmd, [], { stdio: ["pipe", "ignore", "ignore"] });
          } catch (e) {
            return done();
          }
          child.on("error", () => done());
          child.on("close", () => done());
          child.stdin.on("error", () => {});
          child.stdin.end(JSON.stringify(line));
        }),
    );
  };

  return {
    event: async ({ event }) => {
      if (!cmd || !event || typeof event.type !== "string") return;
      const p = event.properties || {};
      const id = p.sessionID || (p.info && p.info.id);
      if (event.type === "session.created") {
        const info = p.info || {};
        if (info.parentID || (dir && info.directory !== dir)) return;
        ours.add(info.id);
        send({ type: event.type, session_id: info.id, directory: info.directory,
               created: info.time && info.time.created });
        return;
      }
      if (!ours.has(id) && ours.size > 0) return;
      if (event.type === "session.status")
        send({ type: event.type, session_id: id, status: p.status && p.status.type });
      else if (event.type === "permission.asked" || event.type === "permission.replied" ||
               event.type === "session.idle" || event.type === "session.error")
        send({ type: event.type, session_id: id });
    },
  };
};
