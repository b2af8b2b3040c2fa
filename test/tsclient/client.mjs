// An operator's steps on a durable-browser session through the TypeScript
// SDK's client (@temporalio/client), not through anything of ours: list by
// search attribute, describe, query, signal, read the history. Each step
// prints one JSON object of what it saw; test/realclient_test.go checks it.
//
//   node client.mjs <address> <workflow-id> look <BrowserState>
//   node client.mjs <address> <workflow-id> signal <name> <json>
//   node client.mjs <address> <workflow-id> history
import { Client, Connection } from '@temporalio/client';

const [address, workflowId, step, ...rest] = process.argv.slice(2);
if (!address || !workflowId || !step) {
  console.error('usage: node client.mjs <address> <workflow-id> look <state> | signal <name> <json> | history');
  process.exit(2);
}
const namespace = 'default';

// decode reads a JSON payload (json/plain, or json/protobuf as Go encodes
// the metadata query's answer); undefined when there is none.
function decode(p) {
  if (!p || !p.data) return undefined;
  return JSON.parse(Buffer.from(p.data).toString('utf8'));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function look(client, state) {
  // Visibility lags the workflow a little: poll the list for a while.
  const query = `WorkflowType = 'BrowserSession' AND BrowserState = '${state}' AND WorkflowId = '${workflowId}'`;
  let listed = [];
  for (let i = 0; i < 120 && listed.length === 0; i++) {
    listed = [];
    for await (const wf of client.workflow.list({ query })) {
      listed.push({ workflow_id: wf.workflowId, type: wf.type, status: wf.status.name,
        state: wf.searchAttributes?.BrowserState?.[0], tag: wf.searchAttributes?.BrowserSessionTag?.[0] });
    }
    if (listed.length === 0) await sleep(250);
  }
  const handle = client.workflow.getHandle(workflowId);
  const d = await handle.describe();
  const meta = await client.workflowService.queryWorkflow({
    namespace, execution: { workflowId }, query: { queryType: '__temporal_workflow_metadata' },
  });
  const md = decode(meta.queryResult?.payloads?.[0]) ?? {};
  const st = await handle.query('state');
  return {
    query, listed, status: d.status.name,
    summary: await d.staticSummary(), details: await d.staticDetails(),
    current_details: md.currentDetails ?? md.current_details ?? '',
    state: st,
  };
}

async function history(client) {
  const h = await client.workflow.getHandle(workflowId).fetchHistory();
  const activities = [];
  const timers = [];
  const signals = [];
  for (const ev of h.events ?? []) {
    const summary = decode(ev.userMetadata?.summary);
    if (ev.activityTaskScheduledEventAttributes) {
      activities.push({ type: ev.activityTaskScheduledEventAttributes.activityType?.name, summary });
    } else if (ev.timerStartedEventAttributes) {
      timers.push({ summary });
    } else if (ev.workflowExecutionSignaledEventAttributes) {
      signals.push(ev.workflowExecutionSignaledEventAttributes.signalName);
    }
  }
  return { activities, timers, signals };
}

const connection = await Connection.connect({ address });
try {
  const client = new Client({ connection, namespace });
  let out;
  switch (step) {
    case 'look':
      out = await look(client, rest[0]);
      break;
    case 'signal':
      await client.workflow.getHandle(workflowId).signal(rest[0], JSON.parse(rest[1]));
      out = { signalled: rest[0] };
      break;
    case 'history':
      out = await history(client);
      break;
    default:
      throw new Error(`unknown step ${step}: use look, signal or history`);
  }
  process.stdout.write(JSON.stringify(out) + '\n');
} finally {
  await connection.close();
}
