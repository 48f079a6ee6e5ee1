/**
 * Wire compatibility with IronCore's IRI: method paths and field numbers, checked against bytes and
 * strings written out by hand from the reference (shared/reference/iep15.md), never derived from the
 * generated code or the kinds table, so a drift in either fails here.
 */
import {expect} from 'chai'
import {POOL_KINDS} from '../../../src/core/pool-kinds.ts'
import * as bucket from '../../../src/iri/gen/bucket/v1alpha1/api.ts'
import * as machine from '../../../src/iri/gen/machine/v1alpha1/api.ts'
import * as volume from '../../../src/iri/gen/volume/v1alpha1/api.ts'
import {methodPath, runtimeServiceFor} from '../../../src/iri/runtime-service.ts'

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex')
}

function bytes(spaced: string): Uint8Array {
  return Buffer.from(spaced.replaceAll(' ', ''), 'hex')
}

describe('IRI wire format', () => {
  const paths = [
    {kind: 'machine', probe: '/machine.v1alpha1.MachineRuntime/Status', version: '/machine.v1alpha1.MachineRuntime/Version'},
    {kind: 'volume', probe: '/volume.v1alpha1.VolumeRuntime/Status', version: '/volume.v1alpha1.VolumeRuntime/Version'},
    {kind: 'bucket', probe: '/bucket.v1alpha1.BucketRuntime/ListBucketClasses', version: '/bucket.v1alpha1.BucketRuntime/Version'},
  ] as const
  for (const {kind, probe, version} of paths) {
    it(`${kind}: probes ${probe} and asks ${version}`, () => {
      const service = runtimeServiceFor(POOL_KINDS[kind])
      expect(methodPath(service, service.methods.probe)).to.equal(probe)
      expect(methodPath(service, service.methods.version)).to.equal(version)
    })
  }

  it('refuses a kinds table that names a method the generated service lacks', () => {
    const wrong = {...POOL_KINDS.bucket, probeMethod: 'Status'}
    expect(() => runtimeServiceFor(wrong)).to.throw('IRI service bucket.v1alpha1.BucketRuntime lacks Status')
  })

  it('refuses a kinds table whose service is not the generated one', () => {
    const wrong = {...POOL_KINDS.volume, runtimeService: 'volume.v1beta1.VolumeRuntime'}
    expect(() => runtimeServiceFor(wrong)).to.throw(/volume\.v1alpha1\.VolumeRuntime.*volume\.v1beta1\.VolumeRuntime/)
  })

  // Tags: (field << 3) | wire type; 0x0a = field 1 length-delimited, 0x12 = field 2 length-delimited,
  // 0x08 / 0x10 = field 1 / 2 varint.
  const messages = [
    {
      what: 'machine StatusResponse: 1 machine_class_status{1 machine_class{1 name, 2 capabilities{1 resources map}}, 2 quantity}',
      codec: machine.StatusResponse,
      value: {machineClassStatus: [{machineClass: {name: 'a', capabilities: {resources: {cpu: 2}}}, quantity: 3}]},
      wire: '0a 12 | 0a 0e | 0a 01 61 | 12 09 | 0a 07 | 0a 03 637075 10 02 | 10 03',
    },
    {
      what: 'volume StatusResponse: 1 volume_class_status{1 volume_class{1 name, 2 capabilities{1 tps, 2 iops}}, 2 quantity}',
      codec: volume.StatusResponse,
      value: {volumeClassStatus: [{volumeClass: {name: 'a', capabilities: {tps: 1, iops: 2}}, quantity: 3}]},
      wire: '0a 0d | 0a 09 | 0a 01 61 | 12 04 | 08 01 10 02 | 10 03',
    },
    {
      what: 'bucket ListBucketClassesResponse: 1 bucket_classes{1 name, 2 capabilities{1 tps, 2 iops}}',
      codec: bucket.ListBucketClassesResponse,
      value: {bucketClasses: [{name: 'a', capabilities: {tps: 1, iops: 2}}]},
      wire: '0a 09 | 0a 01 61 | 12 04 | 08 01 10 02',
    },
    {what: 'machine VersionRequest: 1 version', codec: machine.VersionRequest, value: {version: 'v'}, wire: '0a 01 76'},
    {what: 'volume VersionRequest: 1 version', codec: volume.VersionRequest, value: {version: 'v'}, wire: '0a 01 76'},
    {what: 'bucket VersionRequest: 1 version', codec: bucket.VersionRequest, value: {version: 'v'}, wire: '0a 01 76'},
    {
      what: 'machine VersionResponse: 1 runtime_name, 2 runtime_version',
      codec: machine.VersionResponse,
      value: {runtimeName: 'n', runtimeVersion: 'v'},
      wire: '0a 01 6e | 12 01 76',
    },
    {
      what: 'volume VersionResponse: 1 runtime_name, 2 runtime_version',
      codec: volume.VersionResponse,
      value: {runtimeName: 'n', runtimeVersion: 'v'},
      wire: '0a 01 6e | 12 01 76',
    },
    {
      what: 'bucket VersionResponse: 1 runtime_name, 2 runtime_version',
      codec: bucket.VersionResponse,
      value: {runtimeName: 'n', runtimeVersion: 'v'},
      wire: '0a 01 6e | 12 01 76',
    },
    {what: 'machine StatusRequest has no fields', codec: machine.StatusRequest, value: {}, wire: ''},
    {what: 'volume StatusRequest has no fields', codec: volume.StatusRequest, value: {}, wire: ''},
    {what: 'bucket ListBucketClassesRequest has no fields', codec: bucket.ListBucketClassesRequest, value: {}, wire: ''},
  ]
  for (const {what, codec, value, wire} of messages) {
    it(`${what}: encodes to the reference bytes and decodes them back`, () => {
      // The codecs differ in message type; each is exercised with its own value, so widen for the table.
      const fns = codec as unknown as {fromPartial(v: object): object; encode(m: object): {finish(): Uint8Array}; decode(b: Uint8Array): object}
      const expected = wire.replaceAll('|', '')
      expect(hex(fns.encode(fns.fromPartial(value)).finish())).to.equal(expected.replaceAll(' ', ''))
      expect(fns.decode(bytes(expected))).to.deep.equal(fns.fromPartial(value))
    })
  }
})

describe('IRI answers with 64-bit values', () => {
  const INT64_MAX = 2n ** 63n - 1n

  it('the generated codecs read an int64 above 2^53 without loss (a JavaScript number could not hold it)', () => {
    const value = machine.StatusResponse.fromPartial({machineClassStatus: [{machineClass: {name: 'a', capabilities: {resources: {memory: INT64_MAX}}}, quantity: 2n ** 53n + 1n}]})
    const decoded = machine.StatusResponse.decode(machine.StatusResponse.encode(value).finish())
    expect(decoded.machineClassStatus[0]?.quantity).to.equal(2n ** 53n + 1n)
    expect(decoded.machineClassStatus[0]?.machineClass?.capabilities?.resources.memory).to.equal(INT64_MAX)
    const volumeAnswer = volume.StatusResponse.decode(volume.StatusResponse.encode(volume.StatusResponse.fromPartial({volumeClassStatus: [{quantity: INT64_MAX}]})).finish())
    expect(volumeAnswer.volumeClassStatus[0]?.quantity).to.equal(INT64_MAX)
  })
})
