// The Kubernetes kinds the manifests may use, keyed "<apiVersion>/<kind>" with "/" and "." as
// "_". k8s/test/run --regenerate-schema turns this file and the pinned kubernetes-types (the
// API's OpenAPI definitions as TypeScript) into schemas/kubernetes.json, where every object
// refuses properties the API does not define (as `kubectl apply --validate=strict` does).
// A manifest of a kind missing here fails the test: add the kind, then regenerate.
import type { Deployment } from "kubernetes-types/apps/v1";
import type { HorizontalPodAutoscaler } from "kubernetes-types/autoscaling/v2";
import type { Job } from "kubernetes-types/batch/v1";
import type { ConfigMap, Secret, Service, ServiceAccount } from "kubernetes-types/core/v1";
import type { NetworkPolicy } from "kubernetes-types/networking/v1";
import type { PodDisruptionBudget } from "kubernetes-types/policy/v1";
// Referenced by the hand-written schemas of the operators' custom resources.
import type { Affinity, ResourceRequirements } from "kubernetes-types/core/v1";
import type { ObjectMeta } from "kubernetes-types/meta/v1";

export interface Kinds {
  apps_v1_Deployment: Deployment;
  autoscaling_v2_HorizontalPodAutoscaler: HorizontalPodAutoscaler;
  batch_v1_Job: Job;
  v1_ConfigMap: ConfigMap;
  v1_Secret: Secret;
  v1_Service: Service;
  v1_ServiceAccount: ServiceAccount;
  networking_k8s_io_v1_NetworkPolicy: NetworkPolicy;
  policy_v1_PodDisruptionBudget: PodDisruptionBudget;
}

export interface Shared {
  ObjectMeta: ObjectMeta;
  ResourceRequirements: ResourceRequirements;
  Affinity: Affinity;
}
