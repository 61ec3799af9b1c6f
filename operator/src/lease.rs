//! Leader election through a `coordination.k8s.io/v1` Lease, so two operator replicas never
//! reconcile at once: a replica reconciles only while it holds the lease, renews it every few
//! seconds, and ends the process when it loses it (its Deployment starts it again as a follower).
//! Every write is conditional on the Lease's `resourceVersion`, so two replicas cannot both win.

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::PostParams;
use kube::{Api, Client};
use std::time::Duration;

pub const NAME: &str = "klaxon-operator";
/// A holder that has not renewed for this long has lost the lease.
pub const DURATION_SECS: i32 = 15;
pub const RENEW_EVERY: Duration = Duration::from_secs(5);

/// Tries once to take or renew the lease; true while `identity` holds it.
pub async fn try_hold(client: &Client, namespace: &str, identity: &str) -> kube::Result<bool> {
    let leases = Api::<Lease>::namespaced(client.clone(), namespace);
    let now = chrono::Utc::now();
    let spec = |transitions: i32| LeaseSpec {
        holder_identity: Some(identity.into()),
        lease_duration_seconds: Some(DURATION_SECS),
        acquire_time: Some(MicroTime(now)),
        renew_time: Some(MicroTime(now)),
        lease_transitions: Some(transitions),
    };
    let Some(mut lease) = leases.get_opt(NAME).await? else {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(NAME.into()),
                namespace: Some(namespace.into()),
                ..ObjectMeta::default()
            },
            spec: Some(spec(0)),
        };
        return match leases.create(&PostParams::default(), &lease).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(e)) if e.code == 409 => Ok(false),
            Err(e) => Err(e),
        };
    };
    let current = lease.spec.clone().unwrap_or_default();
    let mine = current.holder_identity.as_deref() == Some(identity);
    let expired = current.renew_time.as_ref().is_none_or(|t| {
        t.0 + chrono::Duration::seconds(
            current.lease_duration_seconds.unwrap_or(DURATION_SECS) as i64
        ) < now
    });
    if !mine && !expired {
        return Ok(false);
    }
    let transitions = current.lease_transitions.unwrap_or(0) + i32::from(!mine);
    let mut next = spec(transitions);
    if mine {
        next.acquire_time = current.acquire_time;
    }
    lease.spec = Some(next);
    // `replace` sends the resourceVersion read above: a concurrent writer makes this a 409.
    match leases.replace(NAME, &PostParams::default(), &lease).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(false),
        Err(e) => Err(e),
    }
}

/// Waits until this replica holds the lease.
pub async fn acquire(client: &Client, namespace: &str, identity: &str) {
    loop {
        match try_hold(client, namespace, identity).await {
            Ok(true) => return,
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "leader lease"),
        }
        tokio::time::sleep(RENEW_EVERY).await;
    }
}

/// Renews the lease until it is lost (taken, or not renewed for its whole duration because the
/// API server did not answer), then returns.
pub async fn keep(client: &Client, namespace: &str, identity: &str) {
    let mut renewed = std::time::Instant::now();
    loop {
        tokio::time::sleep(RENEW_EVERY).await;
        match try_hold(client, namespace, identity).await {
            Ok(true) => renewed = std::time::Instant::now(),
            Ok(false) => return,
            Err(e) => {
                tracing::warn!(error = %e, "renewing the leader lease");
                if renewed.elapsed() >= Duration::from_secs(DURATION_SECS as u64) {
                    return;
                }
            }
        }
    }
}
