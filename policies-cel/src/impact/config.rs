//! Placeholder: being written.

use crate::cluster::ClusterView;
use crate::impact::effects::Effects;
use crate::impact::subject::Subject;

pub(crate) fn estimate(_view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    effects.note(format!("the estimate does not model `{}` yet: no effect is counted", subject.describe()));
}
