/**
 * The pool CustomResourceDefinitions, built from the kinds table. deploy/crds/ holds their rendering
 * (`npm run crds`, checked for drift by a test). They accept what IronCore's own API accepts (its
 * OpenAPI documents in shared/reference/ironcore-api/): any taint effect (IronCore declares no enum and
 * acts on NoExecute), any condition status, times served as null, an atomic conditions list (no merge
 * key, duplicates allowed), and a providerID that is immutable once set. What ironpool itself checks on
 * read is narrower: only what the engine consumes (pool-validator.ts).
 */
import {POOL_KIND_NAMES, POOL_KINDS, READY_CONDITION, type PoolKind, type PoolKindName} from '../../core/index.ts'

type Schema = Record<string, unknown>

const string: Schema = {type: 'string'}
/** metav1.Time; IronCore's API serves a zero time as null, so the CRDs store null as well. */
const dateTime: Schema = {type: 'string', format: 'date-time', nullable: true}
const objectReferences: Schema = {type: 'array', items: {type: 'object', required: ['name'], properties: {name: string}}}
const resourceList: Schema = {
  type: 'object',
  additionalProperties: {
    'x-kubernetes-int-or-string': true,
    anyOf: [{type: 'integer'}, {type: 'string'}],
    pattern: '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$',
  },
}

export const conditionSchema: Schema = {
  type: 'object',
  required: ['type', 'status', 'reason', 'message'],
  properties: {
    type: string,
    status: string,
    reason: string,
    message: string,
    observedGeneration: {type: 'integer', format: 'int64'},
    lastUpdateTime: dateTime,
    lastTransitionTime: dateTime,
  },
}

/** IronCore's rule: providerID may be set once (from empty or absent), then never changed or removed. */
export const PROVIDER_ID_IMMUTABLE = {
  rule: "!has(oldSelf.providerID) || oldSelf.providerID == '' || (has(self.providerID) && self.providerID == oldSelf.providerID)",
  message: 'providerID is immutable once set',
}

const specSchema: Schema = {
  type: 'object',
  'x-kubernetes-validations': [PROVIDER_ID_IMMUTABLE],
  properties: {
    providerID: string,
    taints: {
      type: 'array',
      items: {
        type: 'object',
        required: ['key', 'effect'],
        // No enum on effect, as in IronCore: NoSchedule and NoExecute today, whatever it adds later.
        properties: {key: string, value: string, effect: string},
      },
    },
  },
}

/**
 * The status fields each kind has besides state and conditions (IronCore's API types). IronCore
 * declares an enum of states for MachinePool only.
 */
const STATUS_FIELDS: Record<PoolKindName, {states?: string[]; fields: Record<string, Schema>}> = {
  machine: {
    states: ['Ready', 'Pending', 'Error', 'Offline'],
    fields: {
      availableMachineClasses: objectReferences,
      addresses: {
        type: 'array',
        items: {type: 'object', required: ['type', 'address'], properties: {type: string, address: string}},
      },
      daemonEndpoints: {
        type: 'object',
        properties: {machinepoolletEndpoint: {type: 'object', properties: {port: {type: 'integer', format: 'int32'}}}},
      },
      capacity: resourceList,
      allocatable: resourceList,
    },
  },
  volume: {fields: {availableVolumeClasses: objectReferences, capacity: resourceList, allocatable: resourceList}},
  bucket: {fields: {availableBucketClasses: objectReferences}},
}

/** The OpenAPI v3 schema of a pool object of this kind, as the CRD declares it. */
export function poolSchema(kind: PoolKind): Schema {
  const {states, fields} = STATUS_FIELDS[kind.name]
  return {
    type: 'object',
    properties: {
      apiVersion: string,
      kind: string,
      metadata: {type: 'object'},
      spec: specSchema,
      status: {
        type: 'object',
        properties: {
          state: states === undefined ? string : {type: 'string', enum: states},
          ...fields,
          // Atomic, as IronCore's list (no merge key): a writer replaces the whole list, keeping the others' entries.
          conditions: {type: 'array', items: conditionSchema, 'x-kubernetes-list-type': 'atomic'},
        },
      },
    },
  }
}

export function poolCrd(kind: PoolKind): Schema {
  const ready = (field: string) => `.status.conditions[?(@.type=="${READY_CONDITION}")].${field}`
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {name: `${kind.plural}.${kind.group}`},
    spec: {
      group: kind.group,
      scope: 'Cluster',
      names: {plural: kind.plural, singular: kind.plural.replace(/s$/, ''), kind: kind.kind, listKind: `${kind.kind}List`, categories: ['ironcore', 'pools']},
      versions: [
        {
          name: kind.version,
          served: true,
          storage: true,
          subresources: {status: {}},
          additionalPrinterColumns: [
            {name: 'Ready', type: 'string', jsonPath: ready('status')},
            {name: 'Reason', type: 'string', jsonPath: ready('reason')},
            {name: 'State', type: 'string', jsonPath: '.status.state', priority: 1},
            {name: 'Message', type: 'string', jsonPath: ready('message'), priority: 1},
            {name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp'},
          ],
          schema: {openAPIV3Schema: poolSchema(kind)},
        },
      ],
    },
  }
}

export function poolCrds(): Schema[] {
  return POOL_KIND_NAMES.map((name) => poolCrd(POOL_KINDS[name]))
}

/** File name of a kind's CRD in deploy/crds, as controller-gen names them. */
export function crdFileName(kind: PoolKind): string {
  return `${kind.group}_${kind.plural}.yaml`
}
