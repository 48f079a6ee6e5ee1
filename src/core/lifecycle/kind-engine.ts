/**
 * One kind's engine as the controller wires it, apart from I/O: the lifecycle engine, the kind's view
 * (whole only when the shared sight and each of the kind's caches vouch for it), and the links between
 * them: the view's changes drive the engine's evidence clock, each confirming read and write is an
 * answer for the sight, and the sight is asked before every decision. src/app/kind-controller.ts adds
 * the caches, metrics and Events; the verdicts model (bench/verdicts-model.ts) adds fakes, so both run
 * the same wiring.
 */
import type {PoolLifecycleOptions} from './lifecycle-options.ts'
import {PoolLifecycle} from './pool-lifecycle.ts'
import type {BlindReason, Sight} from './sight/sight.ts'
import {ViewState, type ViewObserver} from './sight/view-state.ts'

export interface KindEngineOptions extends Omit<PoolLifecycleOptions, 'canJudge' | 'onRequest'> {
  /** The controller's sight, shared by every kind. */
  sight: Sight
  /** The kind's caches, each a source of the view (e.g. 'pools', 'leases'). */
  caches: readonly string[]
  /** Hears the view's changes (metrics, Events) before the engine does. */
  viewObserver?: ViewObserver
}

export interface KindEngine {
  lifecycle: PoolLifecycle
  view: ViewState
  /**
   * A cache's state: undefined when whole, else why not. relisted: the cache had to list again before
   * it was whole (its watch could not resume), so events may have been missed during the spell.
   */
  cacheState: (cache: string, reason: BlindReason | undefined, detail?: string, relisted?: boolean) => void
}

export function kindEngine(options: KindEngineOptions): KindEngine {
  const {sight, caches, viewObserver = {}, ...engine} = options
  // The view's observer and canJudge refer to each other: neither is called before both exist.
  const view = new ViewState({
    clock: engine.clock,
    logger: engine.logger,
    sources: ['sight', ...caches],
    fields: {kind: engine.kind.name},
    observer: {
      changed: (whole, reason, how) => {
        viewObserver.changed?.(whole, reason, how)
        lifecycle.setViewWhole(whole, how, reason)
      },
      blindFor: (reason, ms) => viewObserver.blindFor?.(reason, ms),
      spellEnded: (spell) => viewObserver.spellEnded?.(spell),
    },
  })
  const lifecycle: PoolLifecycle = new PoolLifecycle({
    ...engine,
    canJudge: () => sight.check() && view.whole,
    onRequest: (ok, detail) => sight.reportRequest(ok, detail),
  })
  sight.subscribe((state) => view.set('sight', state.reason, state.detail, state.blindForMs))
  view.set('sight', sight.state.reason, sight.state.detail)
  lifecycle.setViewWhole(view.whole)
  return {
    lifecycle,
    view,
    cacheState: (cache, reason, detail, relisted = false) => {
      if (relisted && reason === undefined) view.eventsMissed()
      view.set(cache, reason, detail)
    },
  }
}
