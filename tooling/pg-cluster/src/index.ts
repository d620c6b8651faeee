export {
  freeTcpPort,
  postgresBinFolder,
  startThrowawayCluster,
  type ThrowawayCluster,
  type ThrowawayClusterOptions,
} from './throwaway-cluster';
export { startTcpProxy, type TcpProxy } from './tcp-proxy';
