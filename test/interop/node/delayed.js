// Drives node-resque's delayed queue for resque-go's delayed interop test
// (test/interop/delayed_node_test.go).
//   node delayed.js enqueueAt < [{"queue","class","args","at"}, ...]   (at: Unix ms)
//     -> {"enqueued": n}: node-resque's Queue#enqueueAt for each
//   node delayed.js schedule
//     -> {"transferred": n, "leader": bool}: runs node-resque's Scheduler
//        (leader lock, 10 ms polls) until no bucket is due, then ends it
// Env: REDIS_HOST (127.0.0.1), REDIS_PORT (required), RESQUE_NAMESPACE (resque),
// SCHEDULE_TIMEOUT_MS (30000): schedule fails when the queue is not drained by then.
"use strict";
const { Queue, Scheduler } = require("node-resque");

function readStdin() {
  return new Promise((resolve, reject) => {
    let data = "";
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (c) => (data += c));
    process.stdin.on("end", () => resolve(data));
    process.stdin.on("error", reject);
  });
}

function connection() {
  if (!process.env.REDIS_PORT) throw new Error("REDIS_PORT is required");
  return {
    host: process.env.REDIS_HOST || "127.0.0.1",
    port: Number(process.env.REDIS_PORT),
    namespace: process.env.RESQUE_NAMESPACE || "resque",
  };
}

async function enqueueAt() {
  const queue = new Queue({ connection: connection() });
  queue.on("error", (err) => {
    throw err;
  });
  await queue.connect();
  const jobs = JSON.parse(await readStdin());
  for (const j of jobs) await queue.enqueueAt(j.at, j.queue, j.class, j.args);
  await queue.end();
  return { enqueued: jobs.length };
}

async function schedule() {
  const scheduler = new Scheduler({ connection: connection(), timeout: 10 });
  let transferred = 0;
  let leader = false;
  let failure = null;
  scheduler.on("transferredJob", () => transferred++);
  scheduler.on("leader", () => (leader = true));
  scheduler.on("error", (err) => (failure = failure || err));
  await scheduler.connect();
  await scheduler.start();
  const redis = scheduler.connection.redis;
  const key = scheduler.connection.key("delayed_queue_schedule");
  const deadline = Date.now() + Number(process.env.SCHEDULE_TIMEOUT_MS || 30000);
  for (;;) {
    if (failure) throw failure;
    const now = Math.floor(Date.now() / 1000);
    const due = await redis.zcount(key, "-inf", now);
    if (due === 0 && leader && !scheduler.processing) break;
    if (Date.now() > deadline) throw new Error(`still ${due} due buckets after the timeout (leader: ${leader})`);
    await new Promise((r) => setTimeout(r, 10));
  }
  await scheduler.end();
  return { transferred, leader };
}

async function main() {
  const cmd = process.argv[2];
  let out;
  switch (cmd) {
    case "enqueueAt":
      out = await enqueueAt();
      break;
    case "schedule":
      out = await schedule();
      break;
    default:
      throw new Error("usage: delayed.js enqueueAt|schedule");
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
