package v1alpha1

// GetBroker returns the Broker of a function's eventing; nil when either is
// unset, so callers need not check both.
func (e *FunctionEventing) GetBroker() *Broker {
	if e == nil {
		return nil
	}
	return e.Broker
}

// GetBroker returns the Broker of an agent's eventing; nil when either is
// unset, so callers need not check both.
func (e *AgentEventing) GetBroker() *Broker {
	if e == nil {
		return nil
	}
	return e.Broker
}

// GetAcceptFrom returns the namespaces the agent accepts forwards from, or
// none when e is nil.
func (e *AgentEventing) GetAcceptFrom() []DNSLabel {
	if e == nil {
		return nil
	}
	return e.AcceptFrom
}

// GetForwards returns the agent's forwards, or none when e is nil.
func (e *AgentEventing) GetForwards() []Forward {
	if e == nil {
		return nil
	}
	return e.Forwards
}

// GetCreatedBrokers returns the Brokers the workload created, or none when e
// is nil.
func (e *EventingObservation) GetCreatedBrokers() []string {
	if e == nil {
		return nil
	}
	return e.CreatedBrokers
}
