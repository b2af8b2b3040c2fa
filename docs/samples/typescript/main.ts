// Runs tsBrowserAgent once: its own worker (task queue ts-browser-agent) for
// the workflow; the browser activities run on durable-browser workers.
//   npm install @temporalio/client @temporalio/worker @temporalio/workflow tsx
//   npx tsx main.ts --address 127.0.0.1:7233 --site http://127.0.0.1:8380
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { tsBrowserAgent } from './workflows';

function flag(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
}

async function main() {
  const address = flag('address', '127.0.0.1:7233');
  const site = flag('site', 'http://127.0.0.1:8380');
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address }),
    taskQueue: 'ts-browser-agent',
    workflowsPath: require.resolve('./workflows'),
  });
  const client = new Client({ connection: await Connection.connect({ address }) });
  const title = await worker.runUntil(client.workflow.execute(tsBrowserAgent, {
    args: [site], taskQueue: 'ts-browser-agent', workflowId: `ts-agent-${randomUUID().slice(0, 8)}`, workflowExecutionTimeout: '3m',
  }));
  console.log(`title: ${title}`);
}

main().catch((err) => { console.error(err); process.exit(1); });
