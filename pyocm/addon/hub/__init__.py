"""The hub's add-on manager controllers that act for every ClusterManagementAddOn the
add-on manager manages, whether or not pyocm has an implementation of the add-on:
install strategies, owner references and annotations, configuration resolution and
rollout, and the Progressing condition (upstream ``pkg/addon/controllers``)."""
