// Drives node-resque's own Queue API for resque-go's interop test.
//   node interop.js enqueue   < [{"queue","class","args"}, ...]
//   node interop.js inspect   -> {failedCount, failed, workers, allWorkingOn, stats, queues, length}
//   node interop.js retry     -> node-resque's retryAndRemoveFailed on every failed entry
// Env: REDIS_HOST (127.0.0.1), REDIS_PORT (required), RESQUE_NAMESPACE (resque).
"use strict";
const { Queue } = require("node-resque");

function readStdin() {
  return new Promise((resolve, reject) => {
    let data = "";
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (c) => (data += c));
    process.stdin.on("end", () => resolve(data));
    process.stdin.on("error", reject);
  });
}

async function main() {
  const cmd = process.argv[2];
  if (!process.env.REDIS_PORT) throw new Error("REDIS_PORT is required");
  const queue = new Queue({
    connection: {
      host: process.env.REDIS_HOST || "127.0.0.1",
      port: Number(process.env.REDIS_PORT),
      namespace: process.env.RESQUE_NAMESPACE || "resque",
    },
  });
  queue.on("error", (err) => {
    console.error(err);
    process.exit(1);
  });
  await queue.connect();
  let out;
  switch (cmd) {
    case "enqueue": {
      const jobs = JSON.parse(await readStdin());
      for (const j of jobs) await queue.enqueue(j.queue, j.class, j.args);
      out = { enqueued: jobs.length };
      break;
    }
    case "inspect": {
      const queues = await queue.queues();
      const length = {};
      for (const q of queues) length[q] = await queue.length(q);
      out = {
        failedCount: await queue.failedCount(),
        failed: await queue.failed(0, -1),
        workers: await queue.workers(),
        allWorkingOn: await queue.allWorkingOn(),
        stats: await queue.stats(),
        queues,
        length,
      };
      break;
    }
    case "retry": {
      const failed = await queue.failed(0, -1);
      for (const f of failed) await queue.retryAndRemoveFailed(f);
      out = { retried: failed.length };
      break;
    }
    default:
      throw new Error("usage: interop.js enqueue|inspect|retry");
  }
  await queue.end();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
