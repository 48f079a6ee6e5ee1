/**
 * The parts of @kubernetes/client-node that src/ uses as values, each imported from its own module,
 * never from the package's index: the index re-exports the generated API layer (every API group's
 * classes, ~1,000 models, the ObjectSerializer: 1.5 MB of code), and the bundler can leave out only
 * what no import reaches. With config.js's one import of the generated index narrowed at build time
 * (scripts/build.ts), what loads is the kubeconfig, its authenticators and the HTTP types.
 * Figures: bench/README.md, issue 12. Type-only imports from the package are erased and stay free.
 */
export {KubeConfig} from '@kubernetes/client-node/dist/config.js'
export {HttpMethod, RequestContext} from '@kubernetes/client-node/dist/gen/http/http.js'
export {ApiException} from '@kubernetes/client-node/dist/gen/apis/exception.js'
