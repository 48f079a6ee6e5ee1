/**
 * `--qps` and `--burst` on a KubeConfig: every request and watch of every API client made from it
 * takes a token from one bucket before it is sent, as client-go's rate limiter does per rest.Config.
 * Hooked where client-node authenticates each request (applySecurityAuthentication, which API calls and
 * watches both await), so no call site can forget it.
 */
import type {KubeConfig} from '@kubernetes/client-node'
import {sleep, TokenBucket, type Clock} from '../../core/index.ts'

type Authenticate = (context: unknown) => Promise<void>

export function limitRequestRate(kc: KubeConfig, limits: {qps: number; burst: number}, clock: Clock): void {
  const bucket = new TokenBucket(limits.qps, limits.burst, clock)
  const target = kc as unknown as {applySecurityAuthentication: Authenticate}
  const authenticate = target.applySecurityAuthentication.bind(kc)
  target.applySecurityAuthentication = async (context) => {
    const wait = bucket.reserve()
    if (wait > 0) await sleep(clock, wait)
    await authenticate(context)
  }
}
