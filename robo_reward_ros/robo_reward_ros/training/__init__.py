"""Fine-tuning a Robometer-layout reward model on recorded episodes (``robo-reward finetune``)."""
