import { WorkspaceFileService } from '@veetbot/sandbox-adapter';

/**
 * One confined workspace helper per workspaces folder (docs/adr/0058), as the composition makes
 * one per process. An idle helper holds no reference on the event loop; it ends with its process.
 */
const services = new Map<string, WorkspaceFileService>();

export function workspaceService(workspaces: string): WorkspaceFileService {
  let service = services.get(workspaces);
  if (service === undefined) {
    service = new WorkspaceFileService({ workspaceRoot: workspaces });
    services.set(workspaces, service);
  }
  return service;
}
