// A TypeScript workflow that drives durable-browser by activity name, with
// the activity options of each replay class, handling session_replaced and
// effect_unknown as docs/cross-language.md says.
import {
  ActivityFailure, ApplicationFailure, TimeoutFailure, TimeoutType, proxyActivities, workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';

const SHARED_QUEUE = 'durable-browser';
const NON_RETRYABLE = ['refused', 'stale_snapshot', 'session_ended', 'session_replaced', 'effect_unknown',
  'code_error', 'not_content', 'blocked', 'auth', 'waiting_for_human'];

type Envelope = { ok: boolean; code?: string; message?: string; [k: string]: unknown };
type Acts = Record<string, (input: unknown) => Promise<any>>;

// The activity options of a replay class (workflows.ActivityOptions in Go).
function options(cls: 'read' | 'effect' | 'custody', queue: string, hosted: boolean): ActivityOptions {
  const base: ActivityOptions = {
    taskQueue: queue,
    heartbeatTimeout: '10s',
    // A host queue nobody polls means its worker is gone: give up fast.
    scheduleToStartTimeout: hosted ? '10s' : '30s',
  };
  if (cls === 'effect') return { ...base, startToCloseTimeout: '5m', retry: { maximumAttempts: 1 } };
  if (cls === 'custody') {
    return { ...base, startToCloseTimeout: '2m', retry: { initialInterval: '1s', backoffCoefficient: 2,
      maximumInterval: '10s', maximumAttempts: 4, nonRetryableErrorTypes: NON_RETRYABLE } };
  }
  return { ...base, startToCloseTimeout: '60s', retry: { initialInterval: '500ms', backoffCoefficient: 2,
    maximumInterval: '5s', maximumAttempts: 3, nonRetryableErrorTypes: NON_RETRYABLE } };
}

const acts = (cls: 'read' | 'effect' | 'custody', queue: string, hosted: boolean) =>
  proxyActivities<Acts>(options(cls, queue, hosted));

export async function tsBrowserAgent(site: string): Promise<string> {
  let seq = 0;
  let session: { tag: string; provider: string; host_queue: string };
  const open = async () => {
    // The tag names the browser: <workflow id>-<n>; creating twice with one tag gives one browser.
    seq++;
    const res = await acts('custody', SHARED_QUEUE, false)['browser.create']({
      tag: `${workflowInfo().workflowId}-${seq}`, options: { provider: 'local', action_policy: 'allow' },
    });
    session = res.session;
  };
  // One browser call: its result, or a failure envelope ({ok: false, code, ...}).
  const call = async (activity: string, cls: 'read' | 'effect', args: unknown): Promise<Envelope> => {
    try {
      return await acts(cls, session.host_queue, true)[activity]({ session, policy: 'allow', args });
    } catch (err) {
      const cause = err instanceof ActivityFailure ? err.cause : undefined;
      if (cause instanceof TimeoutFailure && cause.timeoutType === TimeoutType.SCHEDULE_TO_START) {
        // The worker holding the browser is gone and nothing ran: open a new one.
        await open();
        return { ok: false, code: 'session_replaced', message: 'a new browser is open at about:blank: navigate again' };
      }
      if (cause instanceof TimeoutFailure && cls === 'effect') {
        // It started, then its worker went silent: it may have had an effect. Never repeat it blindly.
        return { ok: false, code: 'effect_unknown', effect: 'possibly_effected', message: 'take a snapshot before acting again' };
      }
      if (cause instanceof ApplicationFailure && cause.details?.length) {
        return cause.details[0] as Envelope; // the failure envelope; cause.type is its code
      }
      throw err;
    }
  };

  await open();
  try {
    const ran = await call('browser.run', 'effect', { actions: [{ op: 'goto', url: `${site}/` }] });
    if (!ran.ok && ran.code !== 'effect_unknown' && ran.code !== 'session_replaced') return `run failed: ${ran.message}`;
    const snap = await call('browser.snapshot', 'read', { mode: 'interactive' });
    if (!snap.ok) return `snapshot failed: ${snap.message}`;
    return String(snap.title);
  } finally {
    await acts('custody', session!.host_queue, true)['browser.release']({ session: session! });
  }
}
