// The README's job and channel flows, written against the types openapi-typescript generates from
// the served document (generated/api.d.ts) and run with openapi-fetch under Node. tsc checks this
// file against those types first, so a document that does not describe what the flows use fails
// before anything runs. Usage: node dist/flows.js <base URL> [token]
import createClient from "openapi-fetch";
import type { paths, components } from "./generated/api.js";

type JobResultView = components["schemas"]["JobResultView"];

const [base, token] = process.argv.slice(2);
if (!base) {
  throw new Error("usage: flows.js <base URL> [token]");
}
const client = createClient<paths>({
  baseUrl: base,
  headers: token ? { Authorization: `Bearer ${token}` } : {},
});
const done: string[] = [];

function check(ok: boolean, what: string): void {
  if (!ok) {
    throw new Error(what);
  }
}

async function awaitFinal(id: string): Promise<JobResultView> {
  for (let i = 0; i < 1200; i++) {
    const { data, error } = await client.GET("/api/v1/jobs/{id}/result", { params: { path: { id } } });
    check(error === undefined && data !== undefined, `getJobResult ${id}: ${JSON.stringify(error)}`);
    if (data!.state !== "queued" && data!.state !== "running") {
      return data!;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`job ${id} not final after 30 s`);
}

// A job from a template, then its state and result.
const submitted = await client.POST("/api/v1/jobs", { body: { template: "fan-out-fan-in", params: { workers: 8 } } });
check(submitted.response.status === 202 && submitted.data?.id !== undefined, `submitJob: ${JSON.stringify(submitted.error)}`);
const id = submitted.data!.id!;
const got = await client.GET("/api/v1/jobs/{id}", { params: { path: { id } } });
check(got.data?.id === id, "getJob answers the job asked for");
const result = await awaitFinal(id);
check(result.state === "succeeded", `the template job succeeded: ${JSON.stringify(result)}`);
done.push(`template job ${result.state}`);

// A job in the DSL: 100 goroutines each computing 200 µs, then wait for them.
const dsl = await client.POST("/api/v1/jobs", {
  body: { workload: { steps: [{ op: "spawn", count: 100, steps: [{ op: "compute", us: 200 }] }, { op: "wait" }] } },
});
check(dsl.data?.id !== undefined, `submitJob (DSL): ${JSON.stringify(dsl.error)}`);
const dslResult = await awaitFinal(dsl.data!.id!);
check(dslResult.state === "succeeded", `the DSL job succeeded: ${JSON.stringify(dslResult)}`);
const dslJob = await client.GET("/api/v1/jobs/{id}", { params: { path: { id: dsl.data!.id! } } });
check((dslJob.data?.counters?.goroutinesSpawned ?? 0) >= 100, "the DSL job spawned its 100 goroutines");
const page = await client.GET("/api/v1/jobs", { params: { query: { state: "succeeded", page: 0, size: 50 } } });
check(page.data?.items?.some((j) => j.id === dsl.data!.id) === true, "listJobs(succeeded) holds the DSL job");
done.push(`DSL job ${dslResult.state}, listJobs ${page.data!.items!.length}`);

// Named channels: numbers, strings, objects, arrays and null through a channel.
const name = "ts-client";
const created = await client.POST("/api/v1/channels", { body: { name, capacity: 1 } });
check(created.response.status === 201 && created.data?.name === name, `createChannel: ${JSON.stringify(created.error)}`);
const values: unknown[] = [42, 1.5, "text", { n: 1, nested: { list: ["a", 2] } }, [true, 1.5], null];
for (const value of values) {
  const sent = await client.POST("/api/v1/channels/{name}/send", { params: { path: { name } }, body: { value, timeoutMs: 1000 } });
  check(sent.data?.sent === true, `sent ${JSON.stringify(value)}: ${JSON.stringify(sent.data ?? sent.error)}`);
  const recv = await client.POST("/api/v1/channels/{name}/recv", { params: { path: { name } }, body: { timeoutMs: 1000 } });
  check(recv.data?.received === true && recv.data?.ok === true, `received ${JSON.stringify(value)}: ${JSON.stringify(recv.data ?? recv.error)}`);
  check(JSON.stringify(recv.data!.value) === JSON.stringify(value), `sent ${JSON.stringify(value)}, received ${JSON.stringify(recv.data!.value)}`);
  done.push(`round trip ${JSON.stringify(value)}`);
}
const empty = await client.POST("/api/v1/channels/{name}/recv", { params: { path: { name } }, body: { timeoutMs: 10 } });
check(empty.data?.received === false && empty.data?.reason === "timeout", `an empty channel times out: ${JSON.stringify(empty.data)}`);
const list = await client.GET("/api/v1/channels");
check(list.data?.some((c) => c.name === name) === true, "listChannels holds the channel");
await client.POST("/api/v1/channels/{name}/close", { params: { path: { name } } });
const closedSend = await client.POST("/api/v1/channels/{name}/send", { params: { path: { name } }, body: { value: 1 } });
check(closedSend.response.status === 409 && closedSend.error?.type === "urn:gosched:problem:channel-closed",
  `a send on a closed channel is 409 channel-closed: ${JSON.stringify(closedSend.error)}`);
const drained = await client.POST("/api/v1/channels/{name}/recv", { params: { path: { name } } });
check(drained.data?.received === true && drained.data?.ok === false, `a closed channel answers ok=false: ${JSON.stringify(drained.data)}`);
const deleted = await client.DELETE("/api/v1/channels/{name}", { params: { path: { name } } });
check(deleted.response.status === 204, `deleteChannel: ${deleted.response.status}`);
const gone = await client.GET("/api/v1/channels/{name}", { params: { path: { name } } });
check(gone.response.status === 404 && gone.error?.type === "urn:gosched:problem:not-found", `a deleted channel is 404: ${JSON.stringify(gone.error)}`);
done.push("channel closed, drained and deleted");

console.log(JSON.stringify({ done }));
