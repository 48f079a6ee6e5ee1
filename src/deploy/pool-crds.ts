/**
 * The pool CustomResourceDefinitions, built from the kinds table. deploy/crds/ holds their rendering
 * (`npm run crds`, checked for drift by a test), and the edges validate pools read from the API against
 * the same schema: one source of truth for what a pool looks like.
 */
import {CONDITION_STATUSES, POOL_KIND_NAMES, POOL_KINDS, READY_CONDITION, type PoolKind, type PoolKindName} from '../core/index.ts'

type Schema = Record<string, unknown>

const string: Schema = {type: 'string'}
const dateTime: Schema = {type: 'string', format: 'date-time'}
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
    type: {type: 'string', minLength: 1, maxLength: 316},
    status: {type: 'string', enum: [...CONDITION_STATUSES]},
    reason: string,
    message: string,
    observedGeneration: {type: 'integer', format: 'int64', minimum: 0},
    lastUpdateTime: dateTime,
    lastTransitionTime: dateTime,
  },
}

const specSchema: Schema = {
  type: 'object',
  properties: {
    providerID: string,
    taints: {
      type: 'array',
      items: {
        type: 'object',
        required: ['key', 'effect'],
        properties: {key: string, value: string, effect: {type: 'string', enum: ['NoSchedule']}},
      },
    },
  },
}

/** The status fields each kind has besides state and conditions (IronCore's API types). */
const STATUS_FIELDS: Record<PoolKindName, {states: string[]; fields: Record<string, Schema>}> = {
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
  volume: {
    states: ['Available', 'Pending', 'Unavailable'],
    fields: {availableVolumeClasses: objectReferences, capacity: resourceList, allocatable: resourceList},
  },
  bucket: {states: ['Available', 'Pending', 'Unavailable'], fields: {availableBucketClasses: objectReferences}},
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
          state: {type: 'string', enum: states},
          ...fields,
          conditions: {
            type: 'array',
            items: conditionSchema,
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['type'],
          },
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
