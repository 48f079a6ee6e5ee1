/** Ports that do nothing, for benches that measure the engine and not its logging or events. */
import type {EventSink, Logger} from '../../src/core/ports.ts'

export const quietLogger: Logger = {debug() {}, info() {}, warn() {}, error() {}}
export const quietEvents: EventSink = {record() {}}
