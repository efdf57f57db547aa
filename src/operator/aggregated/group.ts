/**
 * The operator's aggregated API group (config/manager/apiservice.yaml): people's verbs on runs,
 * served through kube-apiserver. Apart from hyperspool.dev, whose resources are the CRDs.
 */
export const AGGREGATED_GROUP = 'api.hyperspool.dev';
export const AGGREGATED_VERSION = 'v1alpha1';
